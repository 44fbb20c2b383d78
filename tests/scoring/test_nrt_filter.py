"""NodeResourceTopologyMatch Filter beyond the upstream vectors: scope × QoS matrix, init and
sidecar containers, host-level resources, missing data, explanations."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.framework import Code
from scoring.plugins.nrt.state import TopologyState
from tests.scoring.builders import make_node
from tests.scoring.nrt_builders import (
    GI,
    cycle,
    filter_verdicts,
    nrt,
    numa_node,
    plugin,
    pod,
    snapshot,
    zone,
)

CELL = {"cpu": 4000, "memory": 4 * GI, "vendor/nic": 2}
SMALL = {"cpu": 1000, "memory": GI}

# (containers, {qos: (container-scope verdict, pod-scope verdict)}); None means admitted.
MATRIX: dict[str, tuple[list[dict[str, int]], dict[str, tuple[bool, bool]]]] = {
    "fits one cell": (
        [{"cpu": 2000, "memory": GI}],
        {"Guaranteed": (True, True), "Burstable": (True, True), "BestEffort": (True, True)},
    ),
    "cpu beyond any cell": (
        [{"cpu": 6000, "memory": GI}],
        {"Guaranteed": (False, False), "Burstable": (True, True), "BestEffort": (True, True)},
    ),
    "device beyond any cell": (
        [{**SMALL, "vendor/nic": 3}],
        {"Guaranteed": (False, False), "Burstable": (False, False), "BestEffort": (False, False)},
    ),
    "two containers only fit apart": (
        [{"cpu": 3000, "memory": GI}, {"cpu": 3000, "memory": GI}],
        {"Guaranteed": (True, False), "Burstable": (True, True), "BestEffort": (True, True)},
    ),
    "devices only fit apart": (
        [{**SMALL, "vendor/nic": 2}, {**SMALL, "vendor/nic": 2}],
        {"Guaranteed": (True, False), "Burstable": (True, False), "BestEffort": (True, False)},
    ),
}
CASES = [
    (scenario, qos, scope, expected[qos][k])
    for scenario, (_, expected) in MATRIX.items()
    for qos in ("Guaranteed", "Burstable", "BestEffort")
    for k, scope in enumerate(("container", "pod"))
]


@pytest.mark.parametrize(("scenario", "qos", "scope", "admitted"), CASES)
def test_scope_and_qos_matrix(scenario: str, qos: str, scope: str, admitted: bool) -> None:
    snap = snapshot(numa_node("n", [CELL, CELL], scope=scope))
    manifest = pod(MATRIX[scenario][0], qos=qos)
    result = plugin().filter(cycle(snap, manifest))
    status = result.status(0)
    if admitted:
        assert status.ok, status
    else:
        assert status.code == Code.UNSCHEDULABLE
        expected = "cannot align pod" if scope == "pod" else "cannot align container"
        assert status.message == expected


def test_init_containers_are_checked_alone_and_consume_nothing() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    big = {"cpu": 4000, "memory": GI}
    manifest = pod([big, big], init=[big, big])
    c = cycle(snap, manifest)
    assert plugin().filter(c).status(0).ok
    detail = plugin().explain(c, 0)
    assert detail is not None
    placements = detail["filter"]["placements"]
    cells = [(p["container"], p["kind"], p.get("numaCell")) for p in placements]
    assert cells == [("init0", "init", 0), ("init1", "init", 0), ("c0", "app", 0), ("c1", "app", 1)]


@pytest.mark.parametrize(
    ("init", "sidecars", "message"),
    [
        ([{"cpu": 5000, "memory": GI}], [], "cannot align init container"),
        ([], [{"cpu": 5000, "memory": GI}], "cannot align sidecar container"),
    ],
)
def test_init_and_sidecar_failures(init: Any, sidecars: Any, message: str) -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    manifest = pod([SMALL], init=init, sidecars=sidecars)
    assert filter_verdicts(snap, manifest) == {"n": message}


def test_pod_scope_uses_the_effective_request() -> None:
    """max(Σ app containers, each init container): a big init container alone decides."""
    snap = snapshot(numa_node("n", [CELL, CELL], scope="pod"))
    assert filter_verdicts(snap, pod([SMALL], init=[{"cpu": 4000, "memory": GI}])) == {"n": None}
    verdict = filter_verdicts(snap, pod([SMALL], init=[{"cpu": 4500, "memory": GI}]))
    assert verdict == {"n": "cannot align pod"}


def test_host_level_resources_are_checked_at_node_level_only() -> None:
    extra = {"ephemeral-storage": 10 * GI, "vendor/fpga": 1}
    snap = snapshot(numa_node("n", [CELL, CELL], extra=extra))
    # No zone reports them: ephemeral-storage and a device are not checked per NUMA (or at all).
    assert filter_verdicts(snap, pod([{**SMALL, "ephemeral-storage": 50 * GI}])) == {"n": None}
    assert filter_verdicts(snap, pod([{**SMALL, "vendor/fpga": 7}])) == {"n": None}
    # A resource the node does not report fails outright...
    missing = pod([{**SMALL, "vendor/gpu": 1}])
    assert filter_verdicts(snap, missing) == {"n": "cannot align container"}
    # ...unless its request is zero.
    assert filter_verdicts(snap, pod([{**SMALL, "vendor/gpu": 0}])) == {"n": None}


def test_native_names_that_are_not_scalar_never_count_as_present() -> None:
    """util.ResourceList(nodeInfo.Allocatable) drops a name like ``gpu``: requests for it fail."""
    snap = snapshot(numa_node("n", [CELL, CELL], extra={"gpu": 4}))
    assert filter_verdicts(snap, pod([{**SMALL, "gpu": 1}])) == {"n": "cannot align container"}


def test_cells_not_reporting_a_resource_are_excluded_even_for_burstable() -> None:
    cells: list[dict[str, int]] = [{"memory": 4 * GI}, {"cpu": 4000}]
    snap = snapshot(numa_node("n", cells))
    burstable = pod([{"cpu": 100, "memory": 100}], qos="Burstable")
    assert filter_verdicts(snap, burstable) == {"n": "cannot align container"}
    only_cpu = pod([{"cpu": 100_000}], qos="Burstable")  # quantity ignored, presence not
    assert filter_verdicts(snap, only_cpu) == {"n": None}


def test_nodes_without_data_and_other_policies_admit_anything() -> None:
    impossible = pod([{"cpu": 64_000, "memory": 64 * GI}])
    snap = snapshot(
        make_node("plain", {"cpu": 8000, "memory": 8 * GI}),
        numa_node("none", [CELL, CELL], policy="none"),
        numa_node("be", [CELL, CELL], policy="best-effort"),
        numa_node("restricted", [CELL, CELL], policy="restricted"),
        numa_node("single", [CELL, CELL]),
    )
    verdicts = filter_verdicts(snap, impossible)
    assert verdicts == {
        "plain": None,
        "none": None,
        "be": None,
        "restricted": None,
        "single": "cannot align container",
    }


def test_best_effort_shortcut_honours_status_qos_class() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    manifest = pod([{"cpu": 64_000, "memory": GI}])
    manifest["status"]["qosClass"] = "BestEffort"
    assert filter_verdicts(snap, manifest) == {"n": None}


def test_the_lowest_cell_id_is_chosen_whatever_the_zone_order() -> None:
    zones = [zone("node-1", CELL), zone("node-0", CELL)]
    node = make_node("n", {"cpu": 8000, "memory": 8 * GI, "vendor/nic": 4})
    policy = {"topologyManagerPolicy": "single-numa-node"}
    snap = snapshot(node, nrt("n", zones, attributes=policy))
    c = cycle(snap, pod([SMALL]))
    assert plugin().filter(c).status(0).ok
    detail = plugin().explain(c, 0)
    assert detail is not None
    assert detail["filter"]["placements"][0]["numaCell"] == 0


def test_repeated_cell_ids_can_make_accounting_inconsistent() -> None:
    """Two zones named node-0: the mask admits id 0, then subtracting from both fails."""
    zones = [zone("node-0", {"cpu": 4000, "memory": 4 * GI}), zone("node-0", {"cpu": 1000})]
    node = make_node("n", {"cpu": 5000, "memory": 4 * GI})
    snap = snapshot(node, nrt("n", zones, attributes={"topologyManagerPolicy": "single-numa-node"}))
    status = plugin().filter(cycle(snap, pod([{"cpu": 2000, "memory": GI}]))).status(0)
    assert status.code == Code.ERROR
    assert status.reasons == (
        "inconsistent resource accounting",
        'resource "cpu" request 2 exceeds NUMA 0 availability 1',
    )


def test_explanation_names_the_resource_and_every_cells_amount() -> None:
    snap = snapshot(numa_node("n", [CELL, {**CELL, "cpu": 3000}]))
    c = cycle(snap, pod([{"cpu": 4500, "memory": GI}]))
    assert not plugin().filter(c).status(0).ok
    detail = plugin().explain(c, 0)
    assert detail is not None
    assert detail["topology"]["policy"] == "single-numa-node"
    (failure,) = detail["filter"]["placements"]
    assert failure["failedResource"] == "cpu"
    assert failure["cellAmounts"] == {"0": "4", "1": "3"}
    assert failure["cellsPerRequest"]["cpu"] == []


def test_identical_nodes_are_filtered_once_per_group() -> None:
    snap = snapshot(*(numa_node(f"n{i}", [CELL, CELL]) for i in range(5)), numa_node("odd", [CELL]))
    group_ids, groups = snap.extension(
        "nrt.state.settled", lambda s: TopologyState(s, "settled")
    ).grouping()
    assert len(groups) == 2
    assert group_ids.tolist() == [0, 0, 0, 0, 0, 1]
    verdicts = filter_verdicts(snap, pod([{"cpu": 3000, "memory": GI}] * 2))
    assert verdicts == {**{f"n{i}": None for i in range(5)}, "odd": "cannot align container"}


def test_explanation_of_an_app_container_shows_what_earlier_containers_left() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    three = {"cpu": 3000, "memory": GI}
    c = cycle(snap, pod([three, three, three]))
    assert plugin().filter(c).status(0).message == "cannot align container"
    detail = plugin().explain(c, 0)
    assert detail is not None
    placed, also_placed, failed = detail["filter"]["placements"]
    assert (placed["numaCell"], also_placed["numaCell"]) == (0, 1)
    assert failed["container"] == "c2"
    assert failed["cellAmounts"] == {"0": "1", "1": "1"}
    assert failed["cellsPerRequest"] == {"cpu": [], "memory": [0, 1]}


def test_explanation_reports_the_best_effort_shortcut_only_when_filter_ran() -> None:
    snap = snapshot(numa_node("n", [CELL, CELL]))
    best_effort = pod([{"cpu": 1000, "memory": GI}], qos="BestEffort")
    c = cycle(snap, best_effort)
    nrt_plugin = plugin()
    before = nrt_plugin.explain(c, 0)
    assert before is not None and "filter" not in before
    assert nrt_plugin.filter(c).status(0).ok
    after = nrt_plugin.explain(c, 0)
    assert after is not None
    assert after["filter"] == "admitted: BestEffort pod requesting only native resources"
