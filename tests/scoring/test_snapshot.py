"""The snapshot accounts bound pods like the scheduler cache and keeps columns consistent."""

from __future__ import annotations

import numpy as np

from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod

MI = 2**20


def cluster() -> Snapshot:
    return Snapshot.from_objects(
        [
            make_node("a", {"cpu": "4", "memory": "8Gi", "pods": "110"}),
            make_node("b", {"cpu": "8", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": "2"}),
            make_pod("web", containers=[make_container("c", {"cpu": "1"})], node_name="a"),
            make_pod(
                "done",
                containers=[make_container("c", {"cpu": "3"})],
                node_name="a",
                status={"phase": "Succeeded"},
            ),
            make_pod("pending", containers=[make_container("c", {"memory": "1Gi"})]),
            make_pod("elsewhere", containers=[make_container("c")], node_name="gone"),
        ],
        warn=lambda _: None,
    )


def test_bound_pods_are_accounted_and_terminal_pods_are_not() -> None:
    snap = cluster()
    cpu, pods = snap.resource_index["cpu"], snap.resource_index["pods"]
    assert snap.requested[:, cpu].tolist() == [1000, 0]
    assert snap.requested[:, pods].tolist() == [1, 0]
    assert snap.non_zero_requested[0].tolist() == [1000, 200 * MI]
    assert [p.name for p in snap.pending] == ["pending"]
    assert [p.name for p in snap.unbound] == ["elsewhere"]


def test_scalar_resources_get_columns() -> None:
    snap = cluster()
    gpu = snap.resource_index["nvidia.com/gpu"]
    assert snap.allocatable[:, gpu].tolist() == [0, 2]


def test_assume_and_forget_round_trip_and_bump_generation() -> None:
    snap = cluster()
    before = snap.requested.copy()
    generation = snap.generation.copy()
    pod = parse_pod(
        make_pod("new", containers=[make_container("c", {"cpu": "2", "example.com/x": "1"})])
    )
    snap.assume_pod(pod, 1)
    x = snap.resource_index["example.com/x"]
    assert snap.requested[1, x] == 1
    assert (snap.generation - generation).tolist() == [0, 1]
    snap.forget_pod(pod, 1)
    assert np.array_equal(snap.requested[:, : before.shape[1]], before)
    assert (snap.generation - generation).tolist() == [0, 2]


def test_listeners_follow_placements() -> None:
    snap = cluster()
    seen: list[tuple[str, str, int]] = []

    class Tracker:
        def pod_added(self, pod: object, node: int) -> None:
            seen.append(("add", pod.name, node))  # type: ignore[attr-defined]

        def pod_removed(self, pod: object, node: int) -> None:
            seen.append(("remove", pod.name, node))  # type: ignore[attr-defined]

    assert snap.extension("tracker", lambda s: Tracker()) is snap.extension(
        "tracker", lambda s: None
    )
    pod = parse_pod(make_pod("new", containers=[make_container("c")]))
    snap.assume_pod(pod, 0)
    snap.forget_pod(pod, 0)
    assert seen == [("add", "new", 0), ("remove", "new", 0)]


def test_label_columns_encode_values() -> None:
    snap = Snapshot.from_objects(
        [make_node("a", labels={"zone": "x"}), make_node("b"), make_node("c", labels={"zone": "y"})]
    )
    column = snap.label_column("zone")
    assert column.codes.tolist() == [column.code("x"), -1, column.code("y")]
    assert column.code("z") < -1


def test_other_kinds_are_ignored_with_a_warning() -> None:
    warnings: list[str] = []
    Snapshot.from_objects(
        [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}],
        warn=warnings.append,
    )
    assert warnings and "Deployment" in warnings[0]
