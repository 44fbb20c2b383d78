"""Koordinator LimitAware TestScore vectors, as real objects through the engine and the CLI.

Existing pods become bound v1 Pods (``existing_pods_repeated`` expanded into ``pod-1-<i>``). The
configuration disables every default plugin and enables LimitAware at score only (the Go test
calls Score directly; Filter would reject the over-committed node of vector 004), with the
vector's ``scoringResourceWeights`` and ``defaultLimitToAllocatableRatio``.
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
from scoring.plugins.limitaware import LimitAware
from scoring.plugins.limitaware.args import default_args
from scoring.snapshot import Snapshot
from tests.scoring.builders import evaluate, plugin_score
from tests.scoring.vector_objects import vector_node, vector_pod

PLUGIN = "LimitAware"
HERE = Path(__file__).parent / "conformance" / "limitaware"
VECTORS = sorted(HERE.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text())
    return vector


def plugin_args(vector: Mapping[str, Any]) -> dict[str, Any]:
    args = vector.get("args") or {}
    keys = ("scoringResourceWeights", "defaultLimitToAllocatableRatio")
    return {k: v for k, v in args.items() if k in keys}


def config(vector: Mapping[str, Any]) -> dict[str, Any]:
    star = [{"name": "*"}]
    plugins: dict[str, Any] = {
        point: {"disabled": star} for point in ("preFilter", "filter", "preScore", "score")
    }
    plugins["score"]["enabled"] = [{"name": PLUGIN, "weight": 1}]
    profile = {
        "schedulerName": "default-scheduler",
        "plugins": plugins,
        "pluginConfig": [{"name": PLUGIN, "args": plugin_args(vector)}],
    }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


def cluster(vector: Mapping[str, Any]) -> list[dict[str, Any]]:
    objects = [vector_node(node) for node in vector["nodes"]]
    for i, pod in enumerate(vector.get("existing_pods") or []):
        objects.append(vector_pod(pod, name=pod.get("name") or f"existing-{i}"))
    repeated = vector.get("existing_pods_repeated")
    if repeated:
        for i in range(int(repeated["count"])):
            objects.append(vector_pod(repeated["pod"], name=f"pod-1-{i}"))
    return objects


def in_process(vector: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    snapshot = Snapshot.from_objects(cluster(vector))
    plugin = LimitAware(default_args(plugin_args(vector)))
    cycle = Cycle(parse_pod(vector_pod(vector["pod"])), snapshot, datetime.now(UTC))
    raw = plugin.score(cycle, np.arange(len(snapshot), dtype=np.int64))
    normalized = plugin.normalize(cycle, raw.copy())
    names = snapshot.node_names
    return (
        {n: int(s) for n, s in zip(names, raw, strict=True)},
        {n: int(s) for n, s in zip(names, normalized, strict=True)},
    )


def check(vector: Mapping[str, Any], raw: Mapping[str, int], normalized: Mapping[str, int]) -> None:
    for name, score in vector["expect"]["scores"].items():
        assert raw[name.lower()] == score, (name, raw)
    for name, score in vector["expect"].get("normalized_scores", {}).items():
        assert normalized[name.lower()] == score, (name, normalized)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector_in_process(path: Path) -> None:
    vector = load(path)
    check(vector, *in_process(vector))


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector_through_cli(path: Path, tmp_path: Path) -> None:
    vector = load(path)
    decision = evaluate(tmp_path, cluster(vector), vector_pod(vector["pod"]), config=config(vector))
    raw, normalized = {}, {}
    for node in decision["nodes"]:
        entry = plugin_score(decision, node["name"], PLUGIN)
        assert entry is not None, node
        raw[node["name"]], normalized[node["name"]] = entry["raw"], entry["normalized"]
    check(vector, raw, normalized)
