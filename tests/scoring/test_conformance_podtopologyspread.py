"""Upstream PodTopologySpread Filter/Score vectors, run through ``python -m scoring evaluate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.scoring.builders import evaluate, plugin_filter, plugin_score
from tests.scoring.podaffinity_vectors import vector_cluster, vector_config, vector_pod

HERE = Path(__file__).parent / "conformance" / "podtopologyspread"
VECTORS = sorted(HERE.glob("*.json"))
PLUGIN = "PodTopologySpread"
REASONS = {
    "Unschedulable": "node(s) didn't match pod topology spread constraints",
    "UnschedulableAndUnresolvable": (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    ),
}


def _load(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text())
    return vector


def test_there_are_vectors_of_both_kinds() -> None:
    kinds = {_load(p)["kind"] for p in VECTORS}
    assert kinds == {"filter", "score"}


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path: Path, tmp_path: Path) -> None:
    vector = _load(path)
    decision = evaluate(
        tmp_path, vector_cluster(vector), vector_pod(vector["pod"]), config=vector_config(vector)
    )
    expect = vector["expect"]
    for node, code in expect.get("codes", {}).items():
        result = plugin_filter(decision, node, PLUGIN)
        assert (result["code"], result["reason"]) == (code, REASONS.get(code)), node
    if expect.get("prescore_status") == "Skip":
        for node in decision["nodes"]:
            assert plugin_score(decision, node["name"], PLUGIN) is None
    for node, score in expect.get("scores", {}).items():
        entry = plugin_score(decision, node, PLUGIN)
        assert entry is not None, f"{node}: no {PLUGIN} score"
        assert entry["normalized"] == score, (node, entry)
