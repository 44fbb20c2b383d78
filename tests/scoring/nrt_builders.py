"""Builders for NUMA test clusters: v1 Nodes with NodeResourceTopology objects, and pods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from scoring.framework import Cycle, FilterResult
from scoring.objects import parse_pod
from scoring.plugins.nrt import NodeResourceTopologyMatch
from scoring.plugins.nrt.args import default_args
from scoring.snapshot import IntArray, Snapshot
from tests.scoring.builders import make_container, make_node, make_pod

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
GI = 1 << 30
Amounts = Mapping[str, int | str]


def zone(
    name: str, available: Amounts, *, costs: Mapping[str, int] | None = None, kind: str = "Node"
) -> dict[str, Any]:
    """A zone; ``capacity``/``allocatable`` are set to junk to prove only ``available`` counts."""
    resources = [
        {"name": r, "capacity": "999", "allocatable": "999", "available": _q(r, a)}
        for r, a in available.items()
    ]
    out: dict[str, Any] = {"name": name, "type": kind, "resources": resources}
    if costs:
        out["costs"] = [{"name": k, "value": v} for k, v in costs.items()]
    return out


def _q(name: str, amount: int | str) -> str:
    if isinstance(amount, str):
        return amount
    return f"{amount}m" if name == "cpu" else str(amount)


def nrt(
    node: str,
    zones: Sequence[Mapping[str, Any]],
    *,
    policies: Sequence[str] = (),
    attributes: Mapping[str, str] | None = None,
    version: str = "v1alpha2",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": f"topology.node.k8s.io/{version}",
        "kind": "NodeResourceTopology",
        "metadata": {"name": node},
        "topologyPolicies": list(policies),
        "zones": list(zones),
    }
    if attributes:
        obj["attributes"] = [{"name": k, "value": v} for k, v in attributes.items()]
    return obj


def numa_node(
    name: str,
    cells: Sequence[Amounts],
    *,
    policy: str = "single-numa-node",
    scope: str = "container",
    extra: Amounts | None = None,
    costs: Sequence[Mapping[str, int]] | None = None,
) -> list[dict[str, Any]]:
    """A Node whose allocatable sums its cells (plus ``extra``) and its NRT (via attributes)."""
    allocatable: dict[str, int | str] = {"pods": 110}
    for cell in cells:
        for resource, amount in cell.items():
            assert isinstance(amount, int)
            allocatable[resource] = int(allocatable.get(resource, 0)) + amount
    allocatable.update(extra or {})
    zones = [
        zone(f"node-{i}", cell, costs=costs[i] if costs else None) for i, cell in enumerate(cells)
    ]
    attributes = {"topologyManagerPolicy": policy, "topologyManagerScope": scope}
    return [make_node(name, allocatable), nrt(name, zones, attributes=attributes)]


def pod(
    containers: Sequence[Amounts],
    *,
    init: Sequence[Amounts] = (),
    sidecars: Sequence[Amounts] = (),
    qos: str = "Guaranteed",
    name: str = "p",
    node_name: str | None = None,
) -> dict[str, Any]:
    """A pod whose containers request ``amounts``; Guaranteed sets limits = requests,
    Burstable sets requests only, BestEffort sets neither for cpu/memory."""

    def container(i: int, prefix: str, amounts: Amounts, sidecar: bool = False) -> dict[str, Any]:
        requests = dict(amounts)
        limits = dict(amounts) if qos == "Guaranteed" else None
        if qos == "BestEffort":
            requests = {k: v for k, v in amounts.items() if k not in ("cpu", "memory")}
            limits = None
        return make_container(
            f"{prefix}{i}", requests, limits, restart_policy="Always" if sidecar else None
        )

    inits = [container(i, "init", a) for i, a in enumerate(init)]
    inits += [container(i, "side", a, sidecar=True) for i, a in enumerate(sidecars)]
    return make_pod(
        name,
        containers=[container(i, "c", a) for i, a in enumerate(containers)],
        init_containers=inits,
        node_name=node_name,
    )


def plugin(args: Mapping[str, Any] | None = None) -> NodeResourceTopologyMatch:
    return NodeResourceTopologyMatch(default_args(args or {}))


def snapshot(*objects: Any) -> Snapshot:
    flat: list[Mapping[str, Any]] = []
    for obj in objects:
        flat.extend(obj if isinstance(obj, list) else [obj])
    return Snapshot.from_objects(flat, warn=lambda _: None)


def cycle(snap: Snapshot, manifest: Mapping[str, Any]) -> Cycle:
    return Cycle(parse_pod(manifest), snap, NOW)


def verdicts(result: FilterResult, snap: Snapshot) -> dict[str, str | None]:
    """node → None (admitted) or the status message."""
    return {
        name: (None if result.status(i).ok else result.status(i).message)
        for i, name in enumerate(snap.node_names)
    }


def scores(
    snap: Snapshot, manifest: Mapping[str, Any], args: Mapping[str, Any] | None = None
) -> dict[str, int]:
    c = cycle(snap, manifest)
    everyone: IntArray = np.arange(len(snap), dtype=np.int64)
    raw = plugin(args).score(c, everyone)
    return {name: int(s) for name, s in zip(snap.node_names, raw, strict=True)}


def filter_verdicts(snap: Snapshot, manifest: Mapping[str, Any]) -> dict[str, str | None]:
    return verdicts(plugin().filter(cycle(snap, manifest)), snap)
