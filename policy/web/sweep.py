"""LoadAware threshold sweep and recommendation for a cluster (``POST
/api/v1/clusters/{id}/loadaware-sweep/``): the engine's sweep on the newest snapshot with the
profile's args in force, and per pool a threshold derived from the load recorded over the
retained snapshots (the dashboard's trends)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from policy.clusters.engine import engine_for
from policy.clusters.models import Cluster
from policy.decisions import evaluation
from policy.engine import client
from policy.engine.questions import question
from policy.web import trends
from policy.web.pages import SnapshotUnreadable, engine_snapshot, loadaware_source, trend_key
from policy.web.presenters.loadaware import RESOURCES
from scoring import LOADAWARE as PLUGIN_NAME
from scoring import LoadAwareScheduling, gc_paused, loadaware_sweep, swept_field

MAX_ROWS = 101
HEADROOM = 10  # points above the pool's p95 load that the recommended threshold leaves
ALL_NODES = "(all nodes)"


class SweepInvalid(ValueError):
    """Bad input; ``errors`` maps each field to what is wrong."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {', '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def _integer(data: Mapping[str, Any], name: str, low: int, high: int) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SweepInvalid({name: [f"required: a whole number from {low} to {high}"]})
    if not low <= value <= high:
        raise SweepInvalid({name: [f"must be from {low} to {high}, got {value}"]})
    return value


def _text(data: Mapping[str, Any], name: str, default: str | None) -> str | None:
    value = data.get(name, default)
    if value is not None and (not isinstance(value, str) or not value or len(value) > 317):
        raise SweepInvalid({name: ["a non-empty string of at most 317 characters"]})
    return value


def parse(data: Any) -> dict[str, Any]:
    """The request body checked: profile, resource, from, to, step, pool_label."""
    if not isinstance(data, Mapping):
        raise SweepInvalid({"non_field_errors": ["expected a JSON object"]})
    unknown = sorted(set(data) - {"profile", "resource", "from", "to", "step", "pool_label"})
    if unknown:
        raise SweepInvalid({name: ["unknown field"] for name in unknown})
    start, stop = _integer(data, "from", 0, 100), _integer(data, "to", 0, 100)
    step = _integer(data, "step", 1, 100)
    if stop < start:
        raise SweepInvalid({"to": [f"must be at least from ({start}), got {stop}"]})
    return {
        "profile": _text(data, "profile", "default-scheduler"),
        "resource": _text(data, "resource", None) or "",
        "thresholds": list(range(start, stop + 1, step)),
        "pool_label": _text(data, "pool_label", None),
    }


def sweep(cluster: Cluster, data: Any) -> dict[str, Any]:
    """The sweep's rows, the current threshold's row, and the recommendation per pool, from
    the engine tier; :class:`SweepInvalid` names the fields at fault."""
    asked = parse(data)
    answer = client.ask(cluster.pk, "loadaware-sweep", {"cluster": cluster.pk, "asked": asked})
    if "invalid" in answer:
        raise SweepInvalid(answer["invalid"])
    result: dict[str, Any] = answer["sweep"]
    return result


@question("loadaware-sweep")
def _sweep_question(payload: dict[str, Any]) -> dict[str, Any]:
    cluster = Cluster.objects.filter(pk=payload["cluster"]).first()
    if cluster is None:
        return {"invalid": {"cluster": [f"no cluster {payload['cluster']}"]}}
    try:
        return {"sweep": _sweep_here(cluster, payload["asked"])}
    except SweepInvalid as exc:
        return {"invalid": exc.errors}


def _sweep_here(cluster: Cluster, asked: dict[str, Any]) -> dict[str, Any]:
    """:func:`sweep` where the cluster's engine state is held (``asked``: as parsed)."""
    stored = cluster.latest_snapshot()
    if stored is None:
        raise SweepInvalid({"cluster": [f"cluster {cluster.name} has no snapshot yet"]})
    source = loadaware_source(cluster, asked["profile"])
    if source.profile != asked["profile"]:
        enabled = ", ".join(source.profiles) or "none"
        raise SweepInvalid(
            {
                "profile": [
                    f"no profile {asked['profile']!r} enables {PLUGIN_NAME} "
                    f"(those that do: {enabled})"
                ]
            }
        )
    plugin = source.plugin
    resource = asked["resource"]
    if resource not in plugin.resources:
        known = ", ".join(plugin.resources)
        raise SweepInvalid(
            {"resource": [f"{resource!r} is not one of the plugin's resources ({known})"]}
        )
    choice = evaluation.choose_configuration(cluster, None)
    engine = engine_for(choice.document)
    try:
        snapshot = engine_snapshot(stored)
    except SnapshotUnreadable as exc:
        raise SweepInvalid({"cluster": [f"the newest snapshot cannot be read: {exc}"]}) from None
    label = asked["pool_label"]
    pools = [node.labels.get(label, "") for node in snapshot.nodes] if label else None
    current = _current(plugin, resource)
    with gc_paused():
        rows = loadaware_sweep(
            engine,
            asked["profile"],
            snapshot,
            stored.taken_at,
            resource,
            sorted({*asked["thresholds"], current}),
            pools,
        )
    by_value = {row.threshold: row for row in rows}
    samples, snapshots = (
        trends.usage_samples(cluster, trend_key(source), resource)
        if resource in RESOURCES
        else ({}, 0)
    )
    return {
        "snapshot": stored.pk,
        "profile": asked["profile"],
        "resource": resource,
        "field": f"{swept_field(plugin)}.{resource}",
        "current": {"threshold": current, **by_value[current].to_dict()},
        "rows": [by_value[t].to_dict() for t in asked["thresholds"]],
        "recommendation": recommend(samples, snapshots, _pool_of(snapshot.nodes, label), resource),
    }


def _current(plugin: LoadAwareScheduling, resource: str) -> int:
    holder: Any = plugin.args
    for name in swept_field(plugin).split("."):
        holder = holder.get(name) if isinstance(holder, Mapping) else None
    value = holder.get(resource) if isinstance(holder, Mapping) else None
    return int(value) if isinstance(value, int) else 0


def _pool_of(nodes: Any, label: str | None) -> dict[str, str]:
    return {node.name: (node.labels.get(label, "") if label else ALL_NODES) for node in nodes}


def recommend(
    samples: Mapping[str, list[int]], snapshots: int, pools: Mapping[str, str], resource: str
) -> dict[str, Any]:
    """Per pool: p50, p95 and max of its nodes' recorded load, and a threshold of p95 plus
    :data:`HEADROOM` points (at most 100, saying so): the filter then refuses a node only when
    it is busier than 95 % of what the pool's nodes were, with room for the estimates."""
    by_pool: dict[str, list[int]] = {}
    for name, values in samples.items():
        if name in pools:
            by_pool.setdefault(pools[name], []).extend(values)
    out: dict[str, Any] = {}
    for pool in sorted(set(pools.values())):
        values = by_pool.get(pool, [])
        if not values:
            out[pool] = {"threshold": None, "how": f"no recorded {resource} load for these nodes"}
            continue
        array = np.asarray(values, dtype=float)
        p50, p95, top = (
            float(np.percentile(array, 50)),
            float(np.percentile(array, 95)),
            float(array.max()),
        )
        wanted = math.ceil(p95) + HEADROOM
        threshold = min(100, wanted)
        capped = f" (capped at 100 from {wanted})" if wanted > 100 else ""
        out[pool] = {
            "threshold": threshold,
            "p50": round(p50, 1),
            "p95": round(p95, 1),
            "max": round(top, 1),
            "samples": len(values),
            "snapshots": snapshots,
            "how": (
                f"p95 of {len(values)} recorded {resource} loads (measured usage plus the "
                f"estimates of recently placed pods, % of allocatable) of this pool's nodes over "
                f"{snapshots} snapshot(s) is {p95:.1f}%; rounded up plus {HEADROOM} points of "
                f"headroom{capped}."
            ),
        }
    return out
