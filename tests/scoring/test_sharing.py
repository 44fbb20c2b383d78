"""Pods in a snapshot share their equal parts (``scoring.sharing``) and read as they were
given."""

from __future__ import annotations

import copy
import json
from datetime import UTC, date, datetime

from scoring.sharing import Sharer
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def replica(name: str, node: str, cpu: str = "500m") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "labels": {"app": "web"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "controller": True}],
        },
        "spec": {
            "nodeName": node,
            "containers": [{"name": "web", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def test_equal_values_are_held_once_and_the_objects_given_are_unchanged() -> None:
    given = [replica("web-a", "n1"), replica("web-b", "n2"), replica("web-c", "n2", cpu="1")]
    before = copy.deepcopy(given)
    sharer = Sharer()
    shared = [sharer.pod(obj) for obj in given]
    assert given == before
    assert [json.dumps(p) for p in shared] == [json.dumps(p) for p in given]  # order too
    a, b, c = shared
    assert a["metadata"]["labels"] is b["metadata"]["labels"] is c["metadata"]["labels"]
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert c["spec"]["containers"] is not a["spec"]["containers"]
    assert b["spec"]["nodeName"] is c["spec"]["nodeName"]
    assert a["metadata"] is not b["metadata"]


def test_values_equal_in_python_but_not_as_json_stay_apart() -> None:
    sharer = Sharer()
    one = sharer.pod({"kind": "Pod", "spec": {"x": [1], "y": {"a": 1, "b": 2}}})
    assert type(one["spec"]["x"][0]) is int
    other = sharer.pod({"kind": "Pod", "spec": {"x": [1.0], "y": {"b": 2, "a": 1}}})
    assert type(other["spec"]["x"][0]) is float
    assert list(other["spec"]["y"]) == ["b", "a"]


def test_a_snapshot_holds_its_pods_as_given_with_replicas_sharing() -> None:
    objects = generate_cluster(nodes=30, pending_pods=6, seed=3, now=NOW)
    snapshot = Snapshot.from_objects(objects)
    pods = [o for o in objects if o["kind"] == "Pod"]
    held = [p.raw for node_pods in snapshot.pods_on_node for p in node_pods]
    held += [p.raw for p in snapshot.pending]
    by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
    assert len(held) == len(pods)
    for raw in held:
        assert raw == by_key[(raw["metadata"]["namespace"], raw["metadata"]["name"])]
    containers = {id(raw["spec"]["containers"]) for raw in held}
    assert len(containers) < len(held)  # replicas hold one list of containers


def test_values_that_are_not_json_are_kept_unshared() -> None:
    """YAML gives dates for unquoted timestamps; such a value is kept as read."""
    sharer = Sharer()
    labels = {"when": date(2026, 1, 1)}
    one = sharer.pod({"kind": "Pod", "metadata": {"labels": labels}})
    other = sharer.pod({"kind": "Pod", "metadata": {"labels": {"when": "2026-01-01"}}})
    assert one["metadata"]["labels"] is labels
    assert other["metadata"]["labels"] == {"when": "2026-01-01"}


def test_a_snapshot_reads_pods_with_yaml_dates() -> None:
    node = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4"}}}
    pod = replica("dated", "n1")
    pod["metadata"]["labels"] = {"when": date(2026, 1, 1)}  # type: ignore[index]
    snapshot = Snapshot.from_objects([node, pod])
    assert snapshot.pods_on_node[0][0].raw["metadata"]["labels"] == {"when": date(2026, 1, 1)}
