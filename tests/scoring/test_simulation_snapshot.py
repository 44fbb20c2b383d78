"""Snapshot changes for simulations: copies, node/NodeMetric/NRT events, pod removal."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import Pod, parse_pod
from scoring.plugins.nodeports import used_ports
from scoring.snapshot import (
    NODE_EVENT,
    NODE_METRIC_EVENT,
    POD_EVENT,
    TOPOLOGY_EVENT,
    Snapshot,
)
from tests.scoring.builders import (
    enabled,
    make_container,
    make_node,
    make_pod,
    single_profile_config,
)
from tests.scoring.loadaware_vectors import metric, node_metric
from tests.scoring.nrt_builders import NOW, nrt, zone

GI = 1 << 30
NUMA = {"topologyManagerPolicy": "single-numa-node"}


def objects() -> list[dict[str, Any]]:
    return [
        make_node("a", {"cpu": 4000, "memory": 8 * GI, "pods": 10}, labels={"zone": "x"}),
        make_node("b", {"cpu": 4000, "memory": 8 * GI, "pods": 10}, labels={"zone": "y"}),
        make_pod("old", containers=[make_container("c", {"cpu": 1000})], node_name="a"),
        node_metric(metric({"cpu": 100, "memory": GI}, node="a"), "2026-11-22T12:00:00Z"),
        nrt("b", [zone("node-0", {"cpu": 4000, "memory": 8 * GI})], attributes=NUMA),
    ]


def guaranteed(name: str, cpu: int) -> Pod:
    amounts = {"cpu": cpu, "memory": GI}
    container = make_container("c", amounts, amounts)
    container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    manifest = make_pod(name, containers=[container])
    manifest["metadata"]["uid"] = f"uid-{name}"
    return parse_pod(manifest)


def engine() -> Engine:
    names = ("LoadAwareScheduling", "LimitAware", "NodeResourceTopologyMatch")
    return Engine(load_configuration(single_profile_config(enabled(*names))))


def test_a_copy_is_independent_plugin_state_included() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    run = engine()
    run.evaluate(guaranteed("probe", 100), snapshot, NOW)  # builds every plugin's state
    copy = snapshot.copy()
    decision = run.evaluate(guaranteed("p", 2000), copy, NOW)
    run.frameworks["default-scheduler"].reserve(decision)
    cpu = snapshot.resource_index["cpu"]
    assert copy.requested[:, cpu].sum() == 3000 and snapshot.requested[:, cpu].sum() == 1000
    assert used_ports(copy).conflicts(("0.0.0.0", "TCP", 8080)).any()
    assert not used_ports(snapshot).conflicts(("0.0.0.0", "TCP", 8080)).any()
    # Plugin state of the original still sees the original cluster: the same pod decides alike.
    again = run.evaluate(guaranteed("p", 2000), snapshot, NOW)
    assert again.selected_node == decision.selected_node
    assert copy.nodes[0] is snapshot.nodes[0]  # immutable objects are shared, not copied


def test_each_change_bumps_its_kind_generation_on_its_node() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    snapshot.assume_pod(guaranteed("p", 100), 1)
    snapshot.set_node_metric("b", node_metric(metric({"cpu": 1}, node="b")))
    snapshot.set_topology("b", None)
    snapshot.update_node(make_node("a", {"cpu": 2000}))
    assert {kind: g.tolist() for kind, g in snapshot.generations.items()} == {
        POD_EVENT: [0, 1],
        NODE_EVENT: [1, 0],
        NODE_METRIC_EVENT: [0, 1],
        TOPOLOGY_EVENT: [0, 1],
    }
    assert snapshot.generation.tolist() == [1, 3]


def test_a_node_update_changes_allocatable_labels_taints_and_cordon() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    assert snapshot.label_column("zone").codes.tolist() == [0, 1]
    updated = make_node(
        "a",
        {"cpu": 2000, "memory": GI, "example.com/gpu": 1},
        labels={"zone": "y"},
        taints=[{"key": "k", "effect": "NoSchedule"}],
        unschedulable=True,
    )
    assert snapshot.update_node(updated) == 0
    gpu = snapshot.resource_index["example.com/gpu"]
    assert snapshot.allocatable[0, snapshot.resource_index["cpu"]] == 2000
    assert snapshot.allocatable[:, gpu].tolist() == [1, 0]
    assert snapshot.requested[0, snapshot.resource_index["cpu"]] == 1000  # pods stay
    column = snapshot.label_column("zone")
    assert column.codes[0] == column.codes[1]
    assert snapshot.taint_sets[snapshot.taint_set_ids[0]][0].key == "k"
    assert snapshot.unschedulable.tolist() == [True, False]


def test_an_unknown_node_name_is_an_error() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    with pytest.raises(KeyError):
        snapshot.update_node(make_node("c", {"cpu": 1}))
    with pytest.raises(KeyError):
        snapshot.set_node_metric("c", None)


def test_removing_a_pod_frees_what_it_held_wherever_it_was_placed() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    bound = snapshot.pods_on_node[0][0]
    placed = guaranteed("p", 500)
    snapshot.assume_pod(placed, 1)
    assert snapshot.remove_pod(bound) == 0
    assert snapshot.remove_pod(placed) == 1  # no nodeName: found by search
    assert snapshot.requested[:, snapshot.resource_index["cpu"]].tolist() == [0, 0]
    with pytest.raises(KeyError):
        snapshot.remove_pod(placed)


def test_the_port_state_follows_a_node_change_then_placements() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    used_ports(snapshot)
    snapshot.update_node(make_node("b", {"cpu": 1000}))  # NodePorts listens to node events
    state = used_ports(snapshot)
    assert state.conflicts(("0.0.0.0", "TCP", 8080)).tolist() == [False, False]
    snapshot.assume_pod(guaranteed("p", 100), 1)
    assert state.conflicts(("0.0.0.0", "TCP", 8080)).tolist() == [False, True]


def test_a_new_topology_is_what_numa_filtering_sees_on_that_node() -> None:
    snapshot = Snapshot.from_objects(objects(), warn=lambda _: None)
    run = engine()
    big = guaranteed("big", 3000)
    assert run.evaluate(big, snapshot, NOW).selected_node == "b"
    small_cells = [zone("node-0", {"cpu": 1000, "memory": 8 * GI})]
    snapshot.set_topology("b", nrt("b", small_cells, attributes=NUMA))
    decision = run.evaluate(big, snapshot, NOW)
    numa = next(o for o in decision.filters if o.plugin == "NodeResourceTopologyMatch")
    assert numa.result.status(1).reasons == ("cannot align container",)
