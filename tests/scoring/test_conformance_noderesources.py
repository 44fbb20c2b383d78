"""Upstream NodeResourcesFit / BalancedAllocation score vectors, run through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoring.plugins.noderesources import broken_linear
from tests.scoring.builders import evaluate, plugin_score, run_cli, write_json
from tests.scoring.vector_objects import score_only_config, vector_cluster, vector_pod

HERE = Path(__file__).parent / "conformance"
ALL = sorted(
    [*HERE.glob("noderesourcesfit/*.json"), *HERE.glob("noderesourcesbalancedallocation/*.json")]
)
# Go tests of a helper function rather than a plugin: checked against the engine's function.
FUNCTIONS = [p for p in ALL if json.loads(p.read_text()).get("kind") == "function"]
VECTORS = [p for p in ALL if p not in FUNCTIONS]


def _load(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text())
    return vector


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path: Path, tmp_path: Path) -> None:
    vector = _load(path)
    plugin = vector["plugin"]
    config = score_only_config(plugin, vector.get("args"))
    expect = vector["expect"]
    if "construct_error" in expect:
        result = run_cli(
            "validate", "--config", str(write_json(tmp_path / "c.json", config)), "--format", "json"
        )
        assert result.returncode == 1, result.stdout + result.stderr
        fields = [e["field"] for e in json.loads(result.stdout)["errors"]]
        wanted = expect["construct_error"]["field"]
        assert any(f == wanted or f.endswith("args." + wanted) for f in fields), fields
        return
    decision = evaluate(tmp_path, vector_cluster(vector), vector_pod(vector["pod"]), config=config)
    if expect.get("prescore_status") == "Skip":
        for node in decision["nodes"]:
            assert plugin_score(decision, node["name"], plugin) is None
        return
    for node, score in expect["scores"].items():
        entry = plugin_score(decision, node.lower(), plugin)
        assert entry is not None, f"{node}: no {plugin} score"
        assert entry["raw"] == score, (node, entry)


FIT_VECTORS = [
    p
    for p in VECTORS
    if _load(p)["plugin"] == "NodeResourcesFit" and "scores" in _load(p)["expect"]
]


def _explained_score(detail: dict[str, Any]) -> int:
    """The raw score rebuilt from the explanation alone: the counted resources' scores,
    averaged by weight (truncated; rounded half up under RequestedToCapacityRatio)."""
    counted = [r for r in detail["scored"] if r["counted"]]
    weights = sum(r["weight"] for r in counted)
    if not weights:
        return 0
    total = sum(r["score"] * r["weight"] for r in counted)
    if detail["strategy"] == "RequestedToCapacityRatio":
        return int(total / weights + 0.5)
    return total // weights


@pytest.mark.parametrize("path", FIT_VECTORS, ids=lambda p: p.stem)
def test_the_explanation_adds_up_to_the_score(path: Path, tmp_path: Path) -> None:
    """Each upstream vector's NodeResourcesFit score, rebuilt from the per-resource scores,
    weights and allocatable/requested amounts the explanation records."""
    vector = _load(path)
    config = score_only_config(vector["plugin"], vector.get("args"))
    decision = evaluate(tmp_path, vector_cluster(vector), vector_pod(vector["pod"]), config=config)
    for node, score in vector["expect"]["scores"].items():
        entry = next(n for n in decision["nodes"] if n["name"] == node.lower())
        detail = entry["details"]["NodeResourcesFit"]
        assert _explained_score(detail) == score, (node, detail)
        ratio = detail["strategy"] == "RequestedToCapacityRatio"
        keys = {"name", "weight", "allocatable", "requested", "score", "counted"}
        for r in detail["scored"]:
            assert set(r) == keys | ({"utilization"} if ratio else set())
        if ratio:
            assert detail["shape"] and {"utilization", "score"} == set(detail["shape"][0])
            points = [(p["utilization"], p["score"] * 10) for p in detail["shape"]]
            for r in detail["scored"]:  # each resource's score is the shape at its utilization
                if r["allocatable"]:
                    at = np.array([r["utilization"]], dtype=np.int64)
                    assert broken_linear(points, at).tolist() == [r["score"]], r


@pytest.mark.parametrize("path", FUNCTIONS, ids=lambda p: p.stem)
def test_function_vector(path: Path) -> None:
    """``helper.BuildBrokenLinearFunction`` cases: the engine's function gives every value."""
    vector = _load(path)
    assert vector["function"] == "helper.BuildBrokenLinearFunction"
    for case in vector["cases"]:
        points = [(int(u), int(s)) for u, s in case["points"]]
        inputs = np.array([p for p, _ in case["assertions"]], dtype=np.int64)
        expected = [e for _, e in case["assertions"]]
        assert broken_linear(points, inputs).tolist() == expected, case
