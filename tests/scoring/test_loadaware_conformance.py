"""Koordinator LoadAware conformance vectors (tests/scoring/conformance/loadaware).

Each plugin vector becomes real input (Nodes, Pods with PodScheduled conditions at the vector's
ages, NodeMetrics, a configuration enabling only LoadAwareScheduling with the vector's args) and
goes through ``python -m scoring evaluate`` at a fixed ``--now``; each args vector goes through
``python -m scoring validate``. The same objects are also run in process against the plugin, and
its explanation must agree with its verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.plugins.loadaware.args import default_args, validate_args
from tests.scoring.builders import evaluate, node_result, run_cli, write_json
from tests.scoring.loadaware_vectors import (
    NOW,
    PLUGIN,
    cluster_objects,
    config,
    incoming_pod,
    load_vectors,
    run_plugin,
)

VECTORS = load_vectors()
PLUGIN_VECTORS = [(n, v) for n, v in VECTORS if v["kind"] == "plugin"]
ARGS_VECTORS = [(n, v) for n, v in VECTORS if v["kind"] == "validate_args"]


def test_every_vector_is_covered() -> None:
    assert len(PLUGIN_VECTORS) == 14
    assert len(ARGS_VECTORS) == 6


@pytest.mark.parametrize(("name", "vector"), PLUGIN_VECTORS, ids=[n for n, _ in PLUGIN_VECTORS])
def test_plugin_vector_through_cli(tmp_path: Path, name: str, vector: dict[str, Any]) -> None:
    expect = vector["expect"]
    cfg = config(vector["args"], filter_plugin="filter" in expect, score_plugin="score" in expect)
    objects = cluster_objects(vector)
    decision = evaluate(tmp_path, objects, incoming_pod(vector), config=cfg, now=NOW)
    for node, want in (expect.get("filter") or {}).items():
        got = next(f for f in node_result(decision, node)["filters"] if f["plugin"] == PLUGIN)
        assert got["code"] == (want["code"] or "Success")
        assert got["reason"] == want["reason"]
    for node, want_score in (expect.get("score") or {}).items():
        entry = node_result(decision, node)
        score = next(s for s in entry["scores"] if s["plugin"] == PLUGIN)
        assert score["raw"] == want_score
        assert score["normalized"] == want_score  # no NormalizeScore
        assert entry["details"][PLUGIN]["score"]["score"] == want_score


@pytest.mark.parametrize(("name", "vector"), PLUGIN_VECTORS, ids=[n for n, _ in PLUGIN_VECTORS])
def test_plugin_vector_in_process(name: str, vector: dict[str, Any]) -> None:
    plugin, cycle, result, scores = run_plugin(vector)
    index = cycle.snapshot.index
    for node, want in (vector["expect"].get("filter") or {}).items():
        status = result.status(index[node])
        assert status.ok == want["ok"]
        assert status.message == want["reason"]
        if not want["ok"]:
            assert status.code.label == want["code"]
        detail = plugin.explain(cycle, index[node])["filter"]
        assert detail["passed"] == want["ok"]
        assert detail["reason"] == want["reason"]
    for node, want_score in (vector["expect"].get("score") or {}).items():
        assert int(scores[index[node]]) == want_score
        assert plugin.explain(cycle, index[node])["score"]["score"] == want_score


@pytest.mark.parametrize(("name", "vector"), ARGS_VECTORS, ids=[n for n, _ in ARGS_VECTORS])
def test_args_vector_in_process(name: str, vector: dict[str, Any]) -> None:
    """As the Go test: validation of the args as given, and after v1 defaulting."""
    assert (not validate_args(vector["args"], "")) == vector["expect"]["valid"]
    assert (not validate_args(default_args(vector["args"]), "")) == vector["expect"]["valid"]


@pytest.mark.parametrize(("name", "vector"), ARGS_VECTORS, ids=[n for n, _ in ARGS_VECTORS])
def test_args_vector_through_cli(tmp_path: Path, name: str, vector: dict[str, Any]) -> None:
    path = write_json(
        tmp_path / "config.json", config(vector["args"], filter_plugin=True, score_plugin=True)
    )
    result = run_cli("validate", "--config", str(path), "--format", "json")
    report = json.loads(result.stdout)
    assert report["valid"] == vector["expect"]["valid"], result.stdout
    assert result.returncode == (0 if vector["expect"]["valid"] else 1)
    for error in report["errors"]:
        assert error["field"].startswith("profiles[0].pluginConfig[0].args."), error
