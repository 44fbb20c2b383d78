"""Decision.compare: the engine's decision beside where a scheduler really put the pod."""

from __future__ import annotations

from datetime import UTC, datetime

from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def test_agreement_rank_and_gap() -> None:
    """LeastAllocated: the emptier node wins; two equal nodes tie; a cordoned one is filtered."""
    nodes = [
        make_node("busy", {"cpu": "4", "memory": "8Gi", "pods": 110}),
        make_node("free-a", {"cpu": "8", "memory": "16Gi", "pods": 110}),
        make_node("free-b", {"cpu": "8", "memory": "16Gi", "pods": 110}),
        {
            **make_node("cordoned", {"cpu": "8", "memory": "16Gi", "pods": 110}),
            "spec": {"unschedulable": True},
        },
    ]
    nodes[3]["spec"] = {"unschedulable": True}
    pod = parse_pod(make_pod("p", containers=[make_container("a", {"cpu": "1", "memory": "1Gi"})]))
    decision = Engine(None).evaluate(pod, Snapshot.from_objects(nodes), NOW)  # the defaults
    assert decision.selected_node == "free-a"
    assert decision.compare("free-a").agrees and decision.compare("free-b").agrees  # a tie
    busy = decision.compare("busy")
    assert not busy.agrees and busy.rank == 3 and busy.gap is not None and busy.gap > 0
    cordoned = decision.compare("cordoned")
    assert (cordoned.agrees, cordoned.rank, cordoned.gap) == (False, None, None)
    assert decision.compare("no-such-node") == cordoned
