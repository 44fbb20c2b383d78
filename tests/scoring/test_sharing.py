"""Pods in a snapshot share their equal parts (``scoring.sharing``), hold no manifest when
bound (``parse_cluster_pod``), and read as they were given."""

from __future__ import annotations

import copy
from datetime import UTC, date, datetime

import pytest

from scoring.object_fields import ObjectError
from scoring.objects import parse_cluster_pod, parse_pod
from scoring.sharing import condition_triples, shared, string_map
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
            "affinity": {"nodeAffinity": {"x": 1}},
            "containers": [{"name": "web", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastTransitionTime": "2026-11-22T10:00:00Z",
                }
            ]
        },
    }


def test_replicas_share_their_parts_and_the_objects_given_are_unchanged() -> None:
    given = [replica("web-a", "n1"), replica("web-b", "n2"), replica("web-c", "n2", cpu="1")]
    before = copy.deepcopy(given)
    a, b, c = (parse_cluster_pod(obj) for obj in given)
    assert given == before
    assert a.labels is b.labels is c.labels
    assert a.owner_references[0] is b.owner_references[0]
    assert a.affinity is b.affinity is c.affinity
    assert a.resources is b.resources and c.resources is not a.resources
    assert a.status_conditions is b.status_conditions
    assert b.requests == {"cpu": 500} and c.requests == {"cpu": 1000}


def test_values_equal_in_python_but_not_as_json_stay_apart() -> None:
    one = shared({"x": [1], "y": {"a": 1, "b": 2}})
    assert type(one["x"][0]) is int
    other = shared({"x": [1.0], "y": {"b": 2, "a": 1}})
    assert type(other["x"][0]) is float
    assert list(other["y"]) == ["b", "a"]
    assert shared({"x": [True]})["x"][0] is True
    assert string_map({"a": 1}) == {"a": "1"} and string_map({}) == {}


def test_a_snapshot_keeps_pending_manifests_only() -> None:
    objects = generate_cluster(nodes=30, pending_pods=6, seed=3, now=NOW)
    snapshot = Snapshot.from_objects(objects)
    by_key = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "Pod"
    }
    assert len(snapshot.pending) == 6
    for pod in snapshot.pending:
        assert pod.raw == by_key[(pod.namespace, pod.name)]
        assert pod.raw is not pod.raw  # a new copy each time: no reader changes the snapshot
    bound = [p for pods in snapshot.pods_on_node for p in pods]
    assert bound and all(p.source is None for p in bound)
    with pytest.raises(LookupError, match="pending pods' manifests only"):
        _ = bound[0].raw
    assert len({id(p.resources) for p in bound}) < len(bound)  # replicas share


def test_a_pod_given_to_evaluate_keeps_its_manifest_even_when_bound() -> None:
    obj = replica("web-a", "n1")
    assert parse_pod(obj).raw == obj


def test_values_that_are_not_json_are_kept_unshared() -> None:
    """YAML gives dates for unquoted timestamps; such a value is kept as read."""
    volume = {"name": "v", "emptyDir": {}, "when": date(2026, 1, 1)}
    obj = replica("web-a", "")
    obj["spec"]["volumes"] = [volume]  # type: ignore[index]
    obj["metadata"]["labels"] = {"when": date(2026, 1, 1)}  # type: ignore[index]
    pod = parse_pod(obj)
    assert pod.volumes[0] is volume
    assert pod.labels == {"when": "2026-01-01"}
    assert pod.raw["spec"]["volumes"][0]["when"] == date(2026, 1, 1)  # kept as read


def test_conditions_read_the_same_from_shared_triples_and_name_a_bad_time() -> None:
    pod = parse_pod(replica("web-a", "n1"))
    scheduled = pod.condition("PodScheduled")
    assert scheduled is not None and scheduled.status == "True"
    assert scheduled == pod.conditions["PodScheduled"]
    assert pod.condition("Ready") is None
    bad = replica("web-b", "n1")
    bad["status"]["conditions"][0]["lastTransitionTime"] = "yesterday"  # type: ignore[index]
    broken = parse_pod(bad)
    with pytest.raises(ObjectError, match=r"Pod shop/web-b: status.conditions\[0\]"):
        broken.condition("PodScheduled")
    odd = [{"type": "Ready", "status": True}]  # not strings: kept as given
    assert condition_triples(odd) is odd
