"""NodeResourceTopologyMatch Score beyond the upstream vectors, values worked out by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scoring.plugins.nrt.score import sample_variance
from tests.scoring.builders import make_node
from tests.scoring.nrt_builders import (
    GI,
    cycle,
    nrt,
    numa_node,
    plugin,
    pod,
    scores,
    snapshot,
    zone,
)

CELL = {"cpu": 4000, "memory": 4 * GI}
REQUEST = {"cpu": 1500, "memory": GI}


def strategy(kind: str, resources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"scoringStrategy": {"type": kind, "resources": resources or []}}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        # cpu in whole cores rounded up: 1500m counts as 2 of 4 cores.
        ("LeastAllocated", (50 + 75) // 2),
        ("MostAllocated", (50 + 25) // 2),
        ("BalancedAllocation", 96),  # fractions .5, .25: 100·(1 − .03125), sample variance
    ],
)
def test_strategies_round_cpu_up_to_whole_cores(kind: str, expected: int) -> None:
    snap = snapshot(numa_node("n", [CELL], scope="pod"))
    assert scores(snap, pod([REQUEST]), strategy(kind)) == {"n": expected}


def test_weights_default_to_one_for_unlisted_and_sub_one_weights() -> None:
    snap = snapshot(numa_node("n", [CELL], scope="pod"))
    listed = strategy("LeastAllocated", [{"name": "cpu", "weight": 3}])
    assert scores(snap, pod([REQUEST]), listed) == {"n": (50 * 3 + 75) // 4}
    negative = strategy("LeastAllocated", [{"name": "cpu", "weight": -2}])
    assert scores(snap, pod([REQUEST]), negative) == {"n": (50 + 75) // 2}


def test_every_request_key_counts_even_zero_and_missing_from_the_cell() -> None:
    """A device the cell lacks scores 0 and still weighs in; a zero request scores 100."""
    snap = snapshot(numa_node("n", [CELL], scope="pod", extra={"vendor/nic": 2}))
    with_device = pod([{**REQUEST, "vendor/nic": 1}])
    assert scores(snap, with_device, strategy("LeastAllocated")) == {"n": (50 + 75 + 0) // 3}
    zero = pod([{**REQUEST, "vendor/nic": 0}])
    assert scores(snap, zero, strategy("LeastAllocated")) == {"n": (50 + 75 + 0) // 3}


def test_node_keeps_the_smallest_non_zero_cell_score() -> None:
    cells = [{"cpu": 1000}, {"cpu": 8000, "memory": 4 * GI}, {"cpu": 4000, "memory": 4 * GI}]
    snap = snapshot(numa_node("n", cells, scope="pod"))
    # cell 0 scores 0 (too small, no memory); cell 1: (75+75)/2; cell 2: (50+75)/2.
    assert scores(snap, pod([REQUEST]), strategy("LeastAllocated")) == {"n": 62}


def test_container_scope_is_the_truncated_mean_over_init_and_app_containers() -> None:
    snap = snapshot(numa_node("n", [CELL]))
    a, b = {"cpu": 1000, "memory": GI}, {"cpu": 2000, "memory": 2 * GI}
    assert scores(snap, pod([a, b]), strategy("LeastAllocated")) == {"n": (75 + 50) // 2}
    with_init = pod([a, b], init=[{"cpu": 4000, "memory": 4 * GI}])
    assert scores(snap, with_init, strategy("LeastAllocated")) == {"n": (0 + 75 + 50) // 3}


def test_balanced_uses_the_sample_variance_and_ignores_weights() -> None:
    cell = {"cpu": 4000, "memory": 4 * GI, "vendor/nic": 4}
    snap = snapshot(numa_node("n", [cell], scope="pod"))
    request = pod([{"cpu": 1000, "memory": 2 * GI, "vendor/nic": 3}])
    weighted = strategy("BalancedAllocation", [{"name": "cpu", "weight": 50}])
    # fractions .25 .5 .75 → sample variance .0625 → 93 (the population variance would give 95)
    assert scores(snap, request, weighted) == {"n": 93}
    over = pod([{"cpu": 1000, "memory": 5 * GI, "vendor/nic": 3}])
    assert scores(snap, over, weighted) == {"n": 0}


def test_sample_variance_matches_the_textbook_formula() -> None:
    values = [0.1, 0.7, 0.35, 0.9]
    mean = sum(values) / 4
    assert sample_variance(values) == pytest.approx(sum((v - mean) ** 2 for v in values) / 3)


def test_who_gets_what() -> None:
    snap = snapshot(
        make_node("plain", {"cpu": 8000, "memory": 8 * GI}),
        numa_node("none", [CELL, CELL], policy="none"),
        numa_node("single", [CELL, CELL]),
    )
    guaranteed = scores(snap, pod([REQUEST]), strategy("LeastAllocated"))
    assert guaranteed == {"plain": 0, "none": 0, "single": 62}
    burstable = scores(snap, pod([REQUEST], qos="Burstable"), strategy("LeastAllocated"))
    assert burstable == {"plain": 100, "none": 100, "single": 100}
    least_numa = scores(snap, pod([REQUEST]), strategy("LeastNUMANodes"))
    assert least_numa == {"plain": 0, "none": 94, "single": 94}


SLIT = [
    {"node-0": 10, "node-1": 12, "node-2": 20, "node-3": 20},
    {"node-0": 12, "node-1": 10, "node-2": 20, "node-3": 20},
    {"node-0": 20, "node-1": 20, "node-2": 10, "node-3": 12},
    {"node-0": 20, "node-1": 20, "node-2": 12, "node-3": 10},
]


def test_least_numa_counts_cells_and_rewards_minimal_distance() -> None:
    roomy = [CELL] * 4
    # cells 1 and 3 lack memory: the only fitting pair is (0, 2), not the closest (0, 1).
    skewed = [CELL, {"cpu": 4000, "memory": 0}, CELL, {"cpu": 4000, "memory": 0}]
    snap = snapshot(
        numa_node("roomy", roomy, scope="pod", costs=SLIT),
        numa_node("skewed", skewed, scope="pod", costs=SLIT),
    )
    six = pod([{"cpu": 6000, "memory": 5 * GI}])
    assert scores(snap, six, strategy("LeastNUMANodes")) == {"roomy": 82, "skewed": 76}
    one = pod([{"cpu": 1000, "memory": GI}])
    assert scores(snap, one, strategy("LeastNUMANodes")) == {"roomy": 94, "skewed": 94}


def test_least_numa_follows_max_numa_nodes_and_missing_costs() -> None:
    node = make_node("n", {"cpu": 8000, "memory": 8 * GI})
    attributes = {"topologyManagerMaxNUMANodes": "4", "topologyManagerScope": "pod"}
    topology = nrt("n", [zone("node-0", CELL), zone("node-1", CELL)], attributes=attributes)
    snap = snapshot(node, topology)
    # step 100/4 = 25; no costs: every distance is 255, which is also the minimum.
    assert scores(snap, pod([REQUEST]), strategy("LeastNUMANodes")) == {"n": 100 - 25 + 12}


def test_least_numa_gives_100_when_no_cell_reports_any_requested_resource() -> None:
    devices = [zone("node-0", {"vendor/nic": 2}), zone("node-1", {"vendor/nic": 2})]
    snap = snapshot(make_node("n", {"cpu": 8000, "memory": 8 * GI}), nrt("n", devices))
    assert scores(snap, pod([REQUEST]), strategy("LeastNUMANodes")) == {"n": 100}
    with_device = pod([{**REQUEST, "vendor/nic": 1}])
    assert scores(snap, with_device, strategy("LeastNUMANodes")) == {"n": 0}


def test_least_numa_container_scope_drains_cells_between_containers() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL], costs=SLIT[:2]))
    three = {"cpu": 3000, "memory": GI}
    assert scores(snap, pod([three, three]), strategy("LeastNUMANodes")) == {"n": 94}
    # After the first container the cells hold 1 + 4 cores: 6 no longer fits anywhere → 0.
    six = {"cpu": 6000, "memory": GI}
    assert scores(snap, pod([three, six]), strategy("LeastNUMANodes")) == {"n": 0}
    # Alone, 6 cores span both cells.
    assert scores(snap, pod([six]), strategy("LeastNUMANodes")) == {"n": 82}


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated", "LeastNUMANodes"])
@pytest.mark.parametrize("scope", ["container", "pod"])
def test_non_contiguous_cell_ids_score_like_their_renumbering(kind: str, scope: str) -> None:
    """Upstream panics on ids like node-0/node-2; the engine scores them like node-0/node-1."""
    small = {"cpu": 2000, "memory": 2 * GI}
    costs = {"node-0": 10, "node-2": 21}, {"node-0": 21, "node-2": 10}
    dense_costs = [{"node-0": 10, "node-1": 21}, {"node-0": 21, "node-1": 10}]
    gap = [zone("node-0", small, costs=costs[0]), zone("node-2", CELL, costs=costs[1])]
    dense = [
        zone("node-0", small, costs=dense_costs[0]),
        zone("node-1", CELL, costs=dense_costs[1]),
    ]
    attributes = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": scope}
    allocatable = {"cpu": 6000, "memory": 6 * GI}
    snap = snapshot(
        make_node("gap", allocatable),
        nrt("gap", gap, attributes=attributes),
        make_node("dense", allocatable),
        nrt("dense", dense, attributes=attributes),
    )
    manifest = pod([{"cpu": 1000, "memory": GI}, {"cpu": 3000, "memory": GI}])
    got = scores(snap, manifest, strategy(kind))
    assert got["gap"] == got["dense"] > 0


def test_score_explanation_lists_cell_scores_per_container() -> None:
    cells = [{"cpu": 1000}, {"cpu": 8000, "memory": 4 * GI}]
    snap = snapshot(numa_node("n", cells))
    c = cycle(snap, pod([REQUEST]))
    nrt_plugin = plugin(strategy("LeastAllocated"))
    assert nrt_plugin.score(c, np.array([0])).tolist() == [75]
    detail = nrt_plugin.explain(c, 0)
    assert detail is not None
    assert detail["score"]["containers"] == [
        {"container": "c0", "cellScores": {"0": 0, "1": 75}, "score": 75}
    ]
