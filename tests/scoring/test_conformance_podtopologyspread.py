"""Upstream PodTopologySpread Filter/Score vectors, run through ``python -m scoring evaluate``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scoring.podaffinity_vectors import check_vector, load_vector

HERE = Path(__file__).parent / "conformance" / "podtopologyspread"
VECTORS = sorted(HERE.glob("*.json"))
PLUGIN = "PodTopologySpread"
REASONS = {
    "Unschedulable": "node(s) didn't match pod topology spread constraints",
    "UnschedulableAndUnresolvable": (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    ),
}


def test_there_are_vectors_of_both_kinds() -> None:
    kinds = {load_vector(p)["kind"] for p in VECTORS}
    assert kinds == {"filter", "score"}


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path: Path, tmp_path: Path) -> None:
    check_vector(path, tmp_path, PLUGIN, REASONS)
