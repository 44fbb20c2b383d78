"""Simulated placements (Reserve/Unreserve through the snapshot) change NUMA availability."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from scoring.objects import Pod, parse_pod
from scoring.plugins.nrt import NodeResourceTopologyMatch
from scoring.snapshot import Snapshot
from tests.scoring.nrt_builders import GI, cycle, numa_node, plugin, pod, snapshot, verdicts

CELL = {"cpu": 4000, "memory": 4 * GI, "vendor/nic": 2}


def cells(nrt_plugin: NodeResourceTopologyMatch, snap: Snapshot, node: int) -> list[dict[str, int]]:
    numa = nrt_plugin.state(snap).numa(node)
    assert numa is not None
    return [dict(cell.available) for cell in numa.cells]


def place(
    nrt_plugin: NodeResourceTopologyMatch, snap: Snapshot, manifest: Mapping[str, Any], node: int
) -> Pod:
    """Filter (which also builds the plugin state), then assume the pod as Reserve does."""
    parsed = parse_pod(manifest)
    nrt_plugin.filter(cycle(snap, manifest))
    snap.assume_pod(parsed, node)
    return parsed


def test_settled_placements_take_from_the_chosen_cell_and_are_undone_exactly() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    nrt_plugin = plugin()
    three = pod([{"cpu": 3000, "memory": GI, "vendor/nic": 1}])
    place(nrt_plugin, snap, three, 0)
    assert cells(nrt_plugin, snap, 0) == [
        {"cpu": 1000, "memory": 3 * GI, "vendor/nic": 1},
        CELL,
    ]
    second = place(nrt_plugin, snap, three, 0)
    assert [c["cpu"] for c in cells(nrt_plugin, snap, 0)] == [1000, 1000]
    assert verdicts(nrt_plugin.filter(cycle(snap, three)), snap) == {"n": "cannot align container"}
    snap.forget_pod(second, 0)
    assert cells(nrt_plugin, snap, 0)[1] == CELL
    assert verdicts(nrt_plugin.filter(cycle(snap, three)), snap) == {"n": None}


def test_settled_burstable_pods_take_only_devices() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    nrt_plugin = plugin()
    place(nrt_plugin, snap, pod([{"cpu": 3000, "memory": GI, "vendor/nic": 2}], qos="Burstable"), 0)
    assert cells(nrt_plugin, snap, 0) == [{**CELL, "vendor/nic": 0}, CELL]


def test_settled_pod_scope_puts_every_container_on_the_pod_cell() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL], scope="pod"))
    nrt_plugin = plugin()
    place(nrt_plugin, snap, pod([{"cpu": 1000, "memory": GI}, {"cpu": 2000, "memory": GI}]), 0)
    assert cells(nrt_plugin, snap, 0) == [{**CELL, "cpu": 1000, "memory": 2 * GI}, CELL]


def test_settled_other_policies_spread_over_the_narrowest_fitting_cells() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL], policy="best-effort"))
    nrt_plugin = plugin()
    place(nrt_plugin, snap, pod([{"cpu": 6000, "memory": GI}]), 0)
    assert [(c["cpu"], c["memory"]) for c in cells(nrt_plugin, snap, 0)] == [
        (0, 3 * GI),
        (2000, 4 * GI),
    ]


def test_over_reserve_cache_takes_the_pod_from_every_cell_floored_at_zero() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    nrt_plugin = plugin({"cacheResyncPeriodSeconds": 30})
    assert nrt_plugin.mode == "over-reserve"
    first = place(nrt_plugin, snap, pod([{"cpu": 3000, "memory": GI}]), 0)
    assert [c["cpu"] for c in cells(nrt_plugin, snap, 0)] == [1000, 1000]
    second = place(nrt_plugin, snap, pod([{"cpu": 3000, "memory": GI}], name="q"), 0)
    assert [(c["cpu"], c["memory"]) for c in cells(nrt_plugin, snap, 0)] == [
        (0, 2 * GI),
        (0, 2 * GI),
    ]
    snap.forget_pod(first, 0)
    assert [c["cpu"] for c in cells(nrt_plugin, snap, 0)] == [1000, 1000]
    snap.forget_pod(second, 0)
    assert cells(nrt_plugin, snap, 0) == [CELL, CELL]


def test_discard_reserved_nodes_reads_like_passthrough() -> None:
    assert plugin({"discardReservedNodes": True, "cacheResyncPeriodSeconds": 30}).mode == "settled"


def test_pods_bound_in_the_snapshot_are_already_in_the_nrt() -> None:
    bound = pod([{"cpu": 3000, "memory": GI}], name="old", node_name="n")
    snap = snapshot(numa_node("n", [CELL, CELL]), bound)
    nrt_plugin = plugin()
    nrt_plugin.filter(cycle(snap, pod([{"cpu": 1000, "memory": GI}])))
    assert cells(nrt_plugin, snap, 0) == [CELL, CELL]


def test_groups_split_when_one_node_changes_and_merge_back() -> None:
    snap = snapshot(numa_node("a", [CELL, CELL]), numa_node("b", [CELL, CELL]))
    nrt_plugin = plugin()
    state = nrt_plugin.state(snap)
    assert len(state.grouping()[1]) == 1
    placed = place(nrt_plugin, snap, pod([{"cpu": 1000, "memory": GI}]), 1)
    assert state.grouping()[0].tolist() == [0, 1]
    snap.forget_pod(placed, 1)
    assert len(state.grouping()[1]) == 1


def test_random_placements_and_removals_restore_the_published_topology() -> None:
    rng = random.Random(7)
    nodes = [
        numa_node(f"n{i}", [CELL, CELL, CELL], policy=p)
        for i, p in enumerate(["single-numa-node", "best-effort", "single-numa-node"])
    ]
    snap = snapshot(*nodes)
    for args in ({}, {"cacheResyncPeriodSeconds": 5}):
        nrt_plugin = plugin(args)
        nrt_plugin.filter(cycle(snap, pod([{"cpu": 1, "memory": 1}])))
        before = [cells(nrt_plugin, snap, n) for n in range(3)]
        placed: list[tuple[Pod, int]] = []
        for step in range(60):
            if placed and rng.random() < 0.4:
                victim, node = placed.pop(rng.randrange(len(placed)))
                snap.forget_pod(victim, node)
            else:
                amounts = {"cpu": rng.choice([500, 1000, 3000]), "memory": GI, "vendor/nic": 1}
                qos = rng.choice(["Guaranteed", "Burstable"])
                manifest = pod([amounts], qos=qos, name=f"p{step}")
                node = rng.randrange(3)
                placed.append((place(nrt_plugin, snap, manifest, node), node))
            for n in range(3):
                assert all(v >= 0 for cell in cells(nrt_plugin, snap, n) for v in cell.values())
        for victim, node in reversed(placed):
            snap.forget_pod(victim, node)
        assert [cells(nrt_plugin, snap, n) for n in range(3)] == before
