"""The informer lists once, then reads only what changed, and always holds what the server has."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from policy.clusters.gateway import informer
from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.informer import ClusterInformer
from policy.clusters.gateway.readback import NODES, SNAPSHOT_KINDS, version_signature
from tests.gateway.faultproxy import FaultProxy, matching
from tests.gateway.kubeserver import Json, KubeServer, create, pending_pod

KIND_NAMES = [kind.kind for kind in SNAPSHOT_KINDS]


def state(objects: list[Json]) -> dict[tuple[str, str, str], str]:
    """What identifies each object's version: (kind, namespace, name) → resourceVersion."""
    return {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["metadata"][
            "resourceVersion"
        ]
        for o in objects
    }


def assert_matches_server(back_objects: list[Json], signature: str, admin: Connection) -> None:
    truth = ClusterInformer().read(admin)  # a new cache lists every kind
    assert state(back_objects) == state(truth.objects)
    assert signature == version_signature(back_objects) == truth.signature


def test_first_read_lists_every_kind_then_watches(
    admin: Connection, seeded: list[Json], scratch_nodes: Callable[..., list[str]]
) -> None:
    cluster = ClusterInformer()
    first = cluster.read(admin)
    assert first.listed == KIND_NAMES and first.changes == 0
    assert_matches_server(first.objects, first.signature, admin)

    again = cluster.read(admin)
    assert again.listed == [] and again.changes == 0
    assert again.signature == first.signature

    [name] = scratch_nodes(1)
    changed = cluster.read(admin)
    assert changed.listed == [] and changed.changes >= 1
    assert ("Node", "", name) in state(changed.objects)
    assert changed.signature != first.signature
    assert_matches_server(changed.objects, changed.signature, admin)


def test_modified_and_deleted_objects_are_applied(
    admin: Connection, seeded: list[Json], scratch_nodes: Callable[..., list[str]]
) -> None:
    kept, gone = scratch_nodes(2)
    cluster = ClusterInformer()
    before = cluster.read(admin)
    admin.request(
        "PATCH",
        f"/api/v1/nodes/{kept}",
        body={"metadata": {"labels": {"informer": "seen"}}},
        content_type="application/merge-patch+json",
    )
    admin.request("DELETE", f"/api/v1/nodes/{gone}")
    after = cluster.read(admin)
    assert after.listed == [] and after.changes == 2
    nodes = {o["metadata"]["name"]: o for o in after.objects if o["kind"] == "Node"}
    assert gone not in nodes and nodes[kept]["metadata"]["labels"]["informer"] == "seen"
    assert after.counts["Node"] == before.counts["Node"] - 1
    assert_matches_server(after.objects, after.signature, admin)


def test_a_pod_that_finishes_leaves_the_cache(
    admin: Connection, seeded: list[Json], unique: Callable[[str], str]
) -> None:
    """The pod list skips finished pods: the watch's field selector turns a pod that reaches
    Succeeded into a DELETED event, so the cache drops it as a fresh list would."""
    pod = create(admin, pending_pod(unique("finishing"), "default"))
    name = pod["metadata"]["name"]
    cluster = ClusterInformer()
    assert ("Pod", "default", name) in state(cluster.read(admin).objects)
    pod["status"] = {"phase": "Succeeded"}
    admin.request("PUT", f"/api/v1/namespaces/default/pods/{name}/status", body=pod)
    after = cluster.read(admin)
    assert ("Pod", "default", name) not in state(after.objects)
    assert_matches_server(after.objects, after.signature, admin)
    admin.request("DELETE", f"/api/v1/namespaces/default/pods/{name}")


def test_an_expired_version_lists_that_kind_again(
    kube: KubeServer,
    seeded: list[Json],
    proxy: FaultProxy,
    scratch_nodes: Callable[..., list[str]],
    tmp_path: Path,
) -> None:
    """410 Gone (the version has left the server's watch cache, as on a busy cluster after a
    long pause) makes the informer list that kind again, as client-go's reflector does."""
    kubeconfig = kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")
    with kube.connect(kubeconfig=kubeconfig) as conn:
        cluster = ClusterInformer(kinds=(NODES,))
        cluster.read(conn)
        [name] = scratch_nodes(1)
        proxy.fail(1, status=410, match=matching("GET", "watch=true"))
        back = cluster.read(conn)
    assert proxy.outcomes("GET", "watch=true") == ["fail 410"]
    assert back.listed == ["Node"] and ("Node", "", name) in state(back.objects)
    with kube.connect() as admin:
        truth = ClusterInformer(kinds=(NODES,)).read(admin).objects
    assert state(back.objects) == state(truth)


def test_managed_fields_are_not_kept(admin: Connection, seeded: list[Json]) -> None:
    raw = admin.request("GET", NODES.path, query={"limit": 1})["items"][0]
    assert "managedFields" in raw["metadata"]  # the server does send them
    back = ClusterInformer().read(admin)
    assert all("managedFields" not in o["metadata"] for o in back.objects)


def test_each_cluster_and_identity_has_its_own_cache() -> None:
    first = informer.informer_for(1, "admin@a")
    assert informer.informer_for(1, "admin@a") is first
    assert informer.informer_for(2, "admin@a") is not first
    moved = informer.informer_for(1, "viewer@b")
    assert moved is not first and informer.informer_for(1, "viewer@b") is moved
    assert informer.informer_for(1, "admin@a") is not first  # the old identity was dropped
    informer.forget(1)
    assert informer.informer_for(1, "viewer@b") is not moved


def test_a_refused_watch_fails_the_read_and_the_next_goes_on(
    admin: Connection, seeded: list[Json]
) -> None:
    """A failed drain leaves the cache at the last event it applied: still a state the server
    was in, so the next read goes on from there."""
    cluster = ClusterInformer()
    cluster.read(admin)
    cache = cluster.caches["Pod"]
    version = cache.resource_version
    cache.resource_version = "not-a-version"
    with pytest.raises(Exception, match="resource"):  # the server refuses the version
        cluster.read(admin)
    cache.resource_version = version
    back = cluster.read(admin)
    assert back.listed == []
    assert_matches_server(back.objects, back.signature, admin)


def test_a_refused_watch_lists_that_kind_on_every_read(
    kube: KubeServer,
    seeded: list[Json],
    proxy: FaultProxy,
    scratch_nodes: Callable[..., list[str]],
    tmp_path: Path,
) -> None:
    """RBAC from before refreshes watched (list only): the kind is listed every time instead,
    and what changed is still known, by comparing resourceVersions."""
    kubeconfig = kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")
    with kube.connect(kubeconfig=kubeconfig) as conn:
        cluster = ClusterInformer(kinds=(NODES,))
        cluster.read(conn)
        cluster.mark_stored(1)
        proxy.fail(1, status=403, match=matching("GET", "watch=true"))
        [name] = scratch_nodes(1)
        back = cluster.read(conn)
        again = cluster.read(conn)
    assert proxy.outcomes("GET", "watch=true") == ["fail 403"]  # asked once, then not again
    assert back.listed == again.listed == ["Node"] and not cluster.caches["Node"].watchable
    assert ("Node", "", name) in state(again.objects)
    changed = cluster.changed_since_stored()
    assert changed is not None and changed[1] == {
        ("Node", "", name): next(o for o in again.objects if o["metadata"]["name"] == name)
    }


def test_a_read_can_list_a_kind_to_see_what_was_just_written(
    admin: Connection, seeded: list[Json], scratch_nodes: Callable[..., list[str]]
) -> None:
    """A watch is served from the API server's cache, which may be a moment behind a write:
    listing reads etcd. The other kinds are still watched."""
    cluster = ClusterInformer()
    cluster.read(admin)
    cluster.mark_stored(7)
    [name] = scratch_nodes(1)
    back = cluster.read(admin, relist=("Node",))
    assert back.listed == ["Node"]
    assert ("Node", "", name) in state(back.objects)
    changed = cluster.changed_since_stored()
    assert changed is not None and ("Node", "", name) in changed[1]
    assert_matches_server(back.objects, back.signature, admin)
