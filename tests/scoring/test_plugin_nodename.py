"""NodeName: Filter as kube-scheduler 1.35.

Cases from pkg/scheduler/framework/plugins/nodename/node_name_test.go (TestNodeName).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from scoring.framework import Code, Cycle, Status
from scoring.objects import parse_pod
from scoring.plugins.nodename import REASON, NodeName
from scoring.snapshot import Snapshot
from tests.scoring.builders import evaluate, make_node, make_pod, only_plugin_config, plugin_filter

NOW = datetime(2025, 6, 1, tzinfo=UTC)
NAMES = [f"node-{i:03d}" for i in range(300)]


def cycle_for(node_name: str | None) -> Cycle:
    pod = parse_pod(make_pod("pod", node_name=node_name))
    return Cycle(pod, Snapshot.from_objects([make_node(n, {"pods": 110}) for n in NAMES]), NOW)


@pytest.mark.parametrize(
    ("node_name", "node", "fits"),
    [
        (None, "node-000", True),  # no host specified
        ("node-007", "node-007", True),  # host matches
        ("node-007", "node-008", False),  # host does not match
    ],
)
def test_filter(node_name: str | None, node: str, fits: bool) -> None:
    status = NodeName({}).filter(cycle_for(node_name)).status(NAMES.index(node))
    assert status == (Status() if fits else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,)))


def test_vectorized_over_every_node() -> None:
    assert NodeName({}).filter(cycle_for("node-123")).passed.tolist() == [
        n == "node-123" for n in NAMES
    ]
    assert not NodeName({}).filter(cycle_for("gone")).passed.any()
    assert NodeName({}).filter(cycle_for(None)).passed.all()


def test_reason_and_explanation() -> None:
    assert REASON == "node(s) didn't match the requested node name"
    assert NodeName({}).explain(cycle_for("node-001"), 0) == {"requestedNodeName": "node-001"}
    assert NodeName({}).explain(cycle_for(None), 0) is None


def test_cli_reports_other_nodes(tmp_path: Path) -> None:
    nodes = [make_node(n, {"cpu": 1000, "pods": 110}) for n in ("a", "b")]
    pod = make_pod("web", containers=[{"name": "c", "image": "x"}], spec={"nodeName": "b"})
    pod["status"] = {"phase": "Pending"}
    decision = evaluate(tmp_path, nodes, pod, config=only_plugin_config("NodeName", ("filter",)))
    assert plugin_filter(decision, "a", "NodeName") == {
        "plugin": "NodeName",
        "code": "UnschedulableAndUnresolvable",
        "reason": "node(s) didn't match the requested node name",
    }
    assert decision["selectedNode"] == "b"
