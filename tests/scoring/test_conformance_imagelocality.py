"""Upstream ImageLocality vectors (image_locality_test.go), run through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.plugins.imagelocality import normalized_image_name
from tests.scoring.builders import evaluate, plugin_score, single_profile_config
from tests.scoring.vector_objects import vector_cluster, vector_pod

HERE = Path(__file__).parent / "conformance" / "imagelocality"
ALL = sorted(HERE.glob("*.json"))
FUNCTIONS = [p for p in ALL if json.loads(p.read_text()).get("kind") == "function"]
VECTORS = [p for p in ALL if p not in FUNCTIONS]
STAR = [{"name": "*"}]
# ImageLocality alone at score: it has no other extension point.
CONFIG = single_profile_config(
    {
        "preFilter": {"disabled": STAR},
        "filter": {"disabled": STAR},
        "preScore": {"disabled": STAR},
        "score": {"disabled": STAR, "enabled": [{"name": "ImageLocality", "weight": 1}]},
    }
)


def _load(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text())
    return vector


def test_the_vectors_are_there() -> None:
    assert len(VECTORS) == 7 and len(FUNCTIONS) == 1


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path: Path, tmp_path: Path) -> None:
    vector = _load(path)
    decision = evaluate(tmp_path, vector_cluster(vector), vector_pod(vector["pod"]), config=CONFIG)
    got = {
        node: (plugin_score(decision, node, "ImageLocality") or {}).get("raw")
        for node in vector["expect"]["scores"]
    }
    assert got == vector["expect"]["scores"]


@pytest.mark.parametrize("path", FUNCTIONS, ids=lambda p: p.stem)
def test_normalized_image_name(path: Path) -> None:
    for case in _load(path)["cases"]:
        assert normalized_image_name(case["input"]) == case["output"], case["name"]
