"""NodeUnschedulable: Filter as kube-scheduler 1.35.

Cases from pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go
(TestNodeUnschedulable), plus the toleration forms ``ToleratesTaint`` accepts.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scoring.framework import Code, Cycle, Status
from scoring.objects import parse_pod
from scoring.plugins.nodeunschedulable import REASON, NodeUnschedulable
from scoring.snapshot import Snapshot
from tests.scoring.builders import evaluate, make_node, make_pod, only_plugin_config, plugin_filter

NOW = datetime(2025, 6, 1, tzinfo=UTC)
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def cycle_for(cordoned: Sequence[bool], tolerations: Sequence[Mapping[str, Any]] = ()) -> Cycle:
    nodes = [make_node(f"n{i}", {"pods": 110}, unschedulable=c) for i, c in enumerate(cordoned)]
    pod = parse_pod(make_pod("pod", spec={"tolerations": list(tolerations)}))
    return Cycle(pod, Snapshot.from_objects(nodes), NOW)


CASES = [
    ("schedulable node, no toleration", False, [], True),
    ("unschedulable node, no toleration", True, [], False),
    (
        "unschedulable node, toleration for the unschedulable taint",
        True,
        [{"key": UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}],
        True,
    ),
    ("toleration of every taint", True, [{"operator": "Exists"}], True),
    ("Equal with the empty value", True, [{"key": UNSCHEDULABLE, "effect": "NoSchedule"}], True),
    (
        "wrong effect",
        True,
        [{"key": UNSCHEDULABLE, "operator": "Exists", "effect": "NoExecute"}],
        False,
    ),
    ("wrong value", True, [{"key": UNSCHEDULABLE, "value": "true", "effect": "NoSchedule"}], False),
    ("other key", True, [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}], False),
]


@pytest.mark.parametrize(
    ("cordoned", "tolerations", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_filter(cordoned: bool, tolerations: list[dict[str, str]], fits: bool) -> None:
    status = NodeUnschedulable({}).filter(cycle_for([cordoned], tolerations)).status(0)
    assert status == (Status() if fits else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,)))


def test_reason_and_explanation() -> None:
    assert REASON == "node(s) were unschedulable"
    cycle = cycle_for([True, False])
    plugin = NodeUnschedulable({})
    assert plugin.explain(cycle, 0) == {"unschedulable": True, "toleratesUnschedulableTaint": False}
    assert plugin.explain(cycle, 1) is None


def test_vectorized_plugin_equals_per_node_reference() -> None:
    rng = random.Random(5)
    cordoned = [rng.random() < 0.3 for _ in range(300)]
    assert NodeUnschedulable({}).filter(cycle_for(cordoned)).passed.tolist() == [
        not c for c in cordoned
    ]
    tolerant = cycle_for(cordoned, [{"key": UNSCHEDULABLE, "operator": "Exists"}])
    assert NodeUnschedulable({}).filter(tolerant).passed.all()


def test_cli_reports_cordoned_nodes(tmp_path: Path) -> None:
    nodes = [
        make_node("cordoned", {"cpu": 1000, "pods": 110}, unschedulable=True),
        make_node("open", {"cpu": 1000, "pods": 110}),
    ]
    pod = make_pod("web", containers=[{"name": "c", "image": "x"}])
    decision = evaluate(
        tmp_path, nodes, pod, config=only_plugin_config("NodeUnschedulable", ("filter",))
    )
    assert plugin_filter(decision, "cordoned", "NodeUnschedulable") == {
        "plugin": "NodeUnschedulable",
        "code": "UnschedulableAndUnresolvable",
        "reason": "node(s) were unschedulable",
    }
    assert decision["selectedNode"] == "open"
