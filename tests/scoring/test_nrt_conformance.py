"""Upstream NodeResourceTopologyMatch vectors (scheduler-plugins Go tests) as real objects.

Each vector becomes v1 Nodes, topology.node.k8s.io/v1alpha2 NodeResourceTopology objects and
a Pod, plus a configuration enabling only this plugin with the vector's args. Every vector runs
through ``python -m scoring evaluate``; the same objects also run through the engine in-process
so the semantics stay checked while the CLI's configuration package is being written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoring.framework import Cycle
from scoring.objects import parse_pod
from scoring.plugins.nrt import NodeResourceTopologyMatch
from scoring.plugins.nrt.args import default_args
from scoring.snapshot import Snapshot
from tests.scoring.builders import evaluate, plugin_filter, plugin_score
from tests.scoring.vector_objects import vector_node, vector_pod

PLUGIN = "NodeResourceTopologyMatch"
HERE = Path(__file__).parent / "conformance" / "noderesourcetopologymatch"
VECTORS = sorted(HERE.glob("*.json"))
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def load(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text())
    return vector


def _quantity(name: str, amount: int) -> str:
    return f"{amount}m" if name == "cpu" else str(amount)


def nrt_object(nrt: Mapping[str, Any]) -> dict[str, Any]:
    """The vector's NRT (v1alpha2 field names, integer amounts) as a Kubernetes object."""
    zones = []
    for zone in nrt["zones"]:
        resources = [
            {
                "name": r["name"],
                **{k: _quantity(r["name"], r[k]) for k in ("capacity", "allocatable", "available")},
            }
            for r in zone.get("resources") or []
        ]
        entry = {"name": zone["name"], "type": zone["type"], "resources": resources}
        if zone.get("costs"):
            entry["costs"] = [dict(c) for c in zone["costs"]]
        zones.append(entry)
    obj: dict[str, Any] = {
        "apiVersion": nrt.get("apiVersion", "topology.node.k8s.io/v1alpha2"),
        "kind": "NodeResourceTopology",
        "metadata": {"name": str(nrt["name"]).lower()},
        "topologyPolicies": list(nrt.get("topologyPolicies") or []),
        "zones": zones,
    }
    if nrt.get("attributes"):
        obj["attributes"] = [dict(a) for a in nrt["attributes"]]
    return obj


def cluster(vector: Mapping[str, Any]) -> list[dict[str, Any]]:
    objects = []
    for node in vector["nodes"]:
        objects.append(vector_node(node))
        if node.get("nrt") is not None:
            objects.append(nrt_object(node["nrt"]))
    return objects


def plugin_args(vector: Mapping[str, Any]) -> dict[str, Any]:
    """Only the real NodeResourceTopologyMatchArgs fields (the vectors add notes)."""
    args = vector.get("args") or {}
    return {k: v for k, v in args.items() if k in ("scoringStrategy", "cacheResyncPeriodSeconds")}


def config(vector: Mapping[str, Any]) -> dict[str, Any]:
    """One profile: every default plugin off, this plugin on at filter or score."""
    star = [{"name": "*"}]
    point = "filter" if vector["kind"] == "filter" else "score"
    plugins: dict[str, Any] = {
        name: {"disabled": star} for name in ("preFilter", "filter", "preScore", "score")
    }
    entry: dict[str, Any] = {"name": PLUGIN}
    if point == "score":
        entry["weight"] = 1
    plugins[point]["enabled"] = [entry]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": plugins,
                "pluginConfig": [{"name": PLUGIN, "args": plugin_args(vector)}],
            }
        ],
    }


def expected_scores(vector: Mapping[str, Any]) -> dict[str, int]:
    """The asserted raw scores; the best-node form asserts only the winner and its score."""
    expect = vector["expect"]
    if "scores" in expect:
        return {name.lower(): score for name, score in expect["scores"].items()}
    best = expect.get("best_node")
    return {best["name"].lower(): best["score"]} if best else {}


def check_best_node(vector: Mapping[str, Any], raw: Mapping[str, int]) -> None:
    best = vector["expect"].get("best_node")
    if best:
        assert max(raw.values()) == best["score"]
        assert [n for n, s in raw.items() if s == best["score"]] == [best["name"].lower()]


def in_process(vector: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """(filter code/reason per node, raw score per node) straight from the plugin."""
    snapshot = Snapshot.from_objects(cluster(vector))
    pod = parse_pod(vector_pod(vector["pod"]))
    plugin = NodeResourceTopologyMatch(default_args(plugin_args(vector)))
    cycle = Cycle(pod, snapshot, NOW)
    result = plugin.filter(cycle)
    filters = {
        name: {"code": result.status(i).code.label, "reason": result.status(i).message}
        for i, name in enumerate(snapshot.node_names)
    }
    scores = plugin.score(cycle, np.arange(len(snapshot), dtype=np.int64))
    return filters, dict(zip(snapshot.node_names, (int(s) for s in scores), strict=True))


def check_filters(vector: Mapping[str, Any], got: Mapping[str, Mapping[str, Any]]) -> None:
    for name, want in vector["expect"]["filter"].items():
        entry = got[name.lower()]
        assert entry["code"] == want["code"], (name, entry)
        if "message" in want:
            assert (entry["reason"] or "").startswith(want["message"]), (name, entry)
        else:
            assert entry["reason"] is None


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector_in_process(path: Path) -> None:
    vector = load(path)
    filters, raw = in_process(vector)
    if vector["kind"] == "filter":
        check_filters(vector, filters)
        return
    for name, score in expected_scores(vector).items():
        assert raw[name] == score, (name, raw)
    check_best_node(vector, raw)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector_through_cli(path: Path, tmp_path: Path) -> None:
    vector = load(path)
    decision = evaluate(
        tmp_path,
        cluster(vector),
        vector_pod(vector["pod"]),
        config=config(vector),
        now="2026-11-22T12:00:00Z",
    )
    if vector["kind"] == "filter":
        got = {}
        for name in vector["expect"]["filter"]:
            entry = plugin_filter(decision, name.lower(), PLUGIN)
            got[name.lower()] = entry
        check_filters(vector, got)
        return
    raw = {}
    for node in decision["nodes"]:
        entry = plugin_score(decision, node["name"], PLUGIN)
        assert entry is not None, node
        raw[node["name"]] = entry["raw"]
    for name, score in expected_scores(vector).items():
        assert raw[name] == score, (name, raw)
    check_best_node(vector, raw)


DERIVED = [p for p in VECTORS if "scores" in (load(p).get("derived") or {})]


@pytest.mark.parametrize("path", DERIVED, ids=lambda p: p.stem)
def test_derived_scores_of_best_node_vectors(path: Path) -> None:
    """Where Go asserts only the winner, the README's derived per-node scores (computed by an
    independent re-implementation) must match too; a cross-check, not part of the contract."""
    vector = load(path)
    _, raw = in_process(vector)
    assert raw == {name.lower(): s for name, s in vector["derived"]["scores"].items()}
