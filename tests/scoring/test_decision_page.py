"""A page made from the decision's arrays (``decision_page.page``) is the page cut from the
whole explanation (``decision_codec.select_in`` of ``decision.to_dict()``): the same nodes, the
same filtered groups in the same order, the same other fields."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.engine import EXTENDED_PROFILE
from scoring import decision_codec, decision_page
from scoring.config import load_configuration
from scoring.decision import Decision
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def decisions(seed: int, profile: Mapping[str, Any] | None) -> list[Decision]:
    objects = generate_cluster(nodes=60, nrt_nodes=4, pending_pods=16, seed=seed, now=NOW)
    snapshot = Snapshot.from_objects(objects)
    engine = Engine(load_configuration(profile)) if profile is not None else Engine()
    pending = [p for p in snapshot.pending if p.scheduler_name == "default-scheduler"]
    return [engine.evaluate(parse_pod(p.raw), snapshot, NOW) for p in pending]


@pytest.mark.parametrize("seed", [1, 7])
@pytest.mark.parametrize("profile", [None, EXTENDED_PROFILE], ids=["default", "extended"])
@pytest.mark.parametrize("window", [(None, None), (0, 5), (3, 40), (55, 10)])
def test_a_page_from_arrays_is_the_page_of_the_whole_explanation(
    seed: int, profile: Mapping[str, Any] | None, window: tuple[int | None, int | None]
) -> None:
    made = decisions(seed, profile)
    groups = [len(decision_page.page(d).selection.groups) for d in made]
    assert max(groups) >= 2, "no decision has two groups of filtered nodes: grouping untested"
    for decision in made:
        whole = decision.to_dict()
        expected = decision_codec.select_in(whole, *window)
        cut = decision_page.page(decision, *window)
        assert cut.selection == expected
        page = {**whole, "nodes": [whole["nodes"][k] for k in expected.positions]}
        assert cut.explanation == page
        assert json.dumps(cut.explanation) == json.dumps(page)  # key order too
        assert cut.names == [node["name"] for node in whole["nodes"]]
