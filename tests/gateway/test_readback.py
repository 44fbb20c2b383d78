"""Read-back from a real API server gives the objects that were put there, ready for the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.informer import ClusterInformer
from policy.clusters.gateway.readback import NODES, PODS, SNAPSHOT_KINDS, list_objects, watch
from policy.web.presenters.loadaware import NodeLoad, cluster_load, default_plugin
from scoring.snapshot import Snapshot
from tests.gateway.conftest import SEED_NOW
from tests.gateway.faultproxy import FaultProxy
from tests.gateway.kubeserver import Json, KubeServer


def dashboard_rows(snapshot: Snapshot) -> dict[str, NodeLoad]:
    """The dashboard's line per node (by name: read-back order is the server's)."""
    load = cluster_load(snapshot, default_plugin(), SEED_NOW, origin="defaults", profile=None)
    return {row.name: replace(row, index=0) for row in load.rows}


def key(obj: Json) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace", ""), meta["name"]


def test_every_seeded_object_comes_back_as_kubectl_prints_it(
    seeded: list[Json], admin: Connection
) -> None:
    back = ClusterInformer().read(admin)  # a refresh's first read: every kind listed
    assert back.missing == []
    assert set(back.resource_versions) == {kind.kind for kind in SNAPSHOT_KINDS}
    found = {key(obj): obj for obj in back.objects}
    for obj in seeded:
        got = found[key(obj)]
        assert got["apiVersion"] == obj["apiVersion"]
        assert got["metadata"]["resourceVersion"]
        CHECKS[obj["kind"]](obj, got)


def _node(sent: Json, got: Json) -> None:
    assert got["metadata"]["labels"] == sent["metadata"]["labels"]
    assert got["metadata"]["annotations"] == sent["metadata"]["annotations"]
    assert got["spec"].get("taints") == sent["spec"].get("taints")
    assert got["spec"].get("unschedulable") == sent["spec"].get("unschedulable")
    for field in ("capacity", "allocatable", "conditions", "addresses"):
        assert got["status"][field] == sent["status"][field]


def _pod(sent: Json, got: Json) -> None:
    assert got["metadata"]["labels"] == sent["metadata"]["labels"]
    assert got["spec"].get("nodeName") == sent["spec"].get("nodeName")
    assert got["spec"]["schedulerName"] == sent["spec"]["schedulerName"]
    assert got["spec"].get("priorityClassName") == sent["spec"].get("priorityClassName")
    assert [c["resources"] for c in got["spec"]["containers"]] == [
        c["resources"] for c in sent["spec"]["containers"]
    ]
    assert got["status"]["phase"] == sent["status"]["phase"]
    # The server writes ``lastProbeTime: null`` where the generator leaves it out.
    conditions = _without_nulls(got["status"].get("conditions"))
    assert conditions == _without_nulls(sent["status"].get("conditions"))


def _without_nulls(conditions: list[Json] | None) -> list[Json] | None:
    if conditions is None:
        return None
    return [{k: v for k, v in c.items() if v is not None} for c in conditions]


def _node_metric(sent: Json, got: Json) -> None:
    assert got["spec"] == sent["spec"]
    assert got["status"] == sent["status"]


def _topology(sent: Json, got: Json) -> None:
    assert got["zones"] == sent["zones"]
    assert got["attributes"] == sent["attributes"]


CHECKS: dict[str, Callable[[Json, Json], None]] = {
    "Node": _node,
    "Pod": _pod,
    "NodeMetric": _node_metric,
    "NodeResourceTopology": _topology,
}


def test_the_engine_and_dashboard_see_the_same_cluster(
    seeded: list[Json], admin: Connection
) -> None:
    seeded_keys = {key(obj) for obj in seeded}
    back = [obj for obj in ClusterInformer().read(admin).objects if key(obj) in seeded_keys]
    assert len(back) == len(seeded)

    sent, got = Snapshot.from_objects(seeded), Snapshot.from_objects(back)
    expected, actual = dashboard_rows(sent), dashboard_rows(got)
    assert actual == expected and len(actual) == len(sent.node_names)
    assert sorted(got.node_names) == sorted(sent.node_names)
    for node in sent.nodes:
        other = got.nodes[got.index[node.name]]
        assert (other.amounts, other.taints, dict(other.labels)) == (
            node.amounts,
            node.taints,
            dict(node.labels),
        )
        pods = sorted(p.name for p in sent.pods_on_node[sent.index[node.name]])
        assert sorted(p.name for p in got.pods_on_node[got.index[node.name]]) == pods
    assert sorted(p.name for p in got.pending) == sorted(p.name for p in sent.pending)
    assert set(got.node_metrics) == set(sent.node_metrics)
    assert set(got.topologies) == set(sent.topologies)


def test_lists_are_paginated(
    kube: KubeServer, seeded: list[Json], proxy: FaultProxy, tmp_path
) -> None:
    with kube.connect(kubeconfig=kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")) as conn:
        small = list_objects(conn, PODS, page_size=7)
    with kube.connect() as conn:
        whole = list_objects(conn, PODS)
    pages = proxy.outcomes("GET", "/api/v1/pods")
    assert len(pages) == -(-len(whole.items) // 7)  # ceil: one request per page
    assert [key(p) for p in small.items] == [key(p) for p in whole.items]
    assert small.items[0]["kind"] == "Pod" and small.items[0]["apiVersion"] == "v1"


def test_a_missing_crd_is_reported_not_fatal(admin: Connection) -> None:
    from policy.clusters.gateway.readback import Kind

    absent = Kind("Widget", "example.com/v1", "/apis/example.com/v1/widgets", optional=True)
    result = list_objects(admin, absent)
    assert result.missing and result.items == []


def test_watch_continues_from_a_list(
    admin: Connection, seeded: list[Json], scratch_nodes: Callable[..., list[str]]
) -> None:
    version = list_objects(admin, NODES).resource_version
    [name] = scratch_nodes(1)
    events = watch(admin, NODES, version, timeout_seconds=5)
    first = next(events)
    events.close()
    assert (first.type, first.object["metadata"]["name"]) == ("ADDED", name)
    assert first.object["kind"] == "Node" and first.resource_version
