"""The full cycle against the real kube-apiserver, through the API and a real Celery worker:
edit a threshold → sync job → annotation on the node → snapshot re-read → the engine sees the
new effective threshold; and drift when someone edits a managed annotation by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import Group, User

from policy.clusters.engine import clear_caches, snapshot_for
from policy.clusters.gateway.connection import MERGE_PATCH, Connection
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.decisions.models import PlacementDecision
from policy.sync.models import SyncJob
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from scoring.plugins.loadaware.thresholds import NodeThresholds
from tests.gateway.kubeserver import Json, KubeServer
from tests.sync.worker import (  # noqa: F401 (fixtures)
    Worker,
    committed_db,
    wait_for,
    workers,
)


def finished(api_client: Any, job_id: int, timeout: float = 90) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body: dict[str, Any] = api_client.get(f"/api/v1/sync-jobs/{job_id}/").json()
        return body if body["status"] in ("succeeded", "failed") else None

    return wait_for(done, timeout, f"sync job {job_id}")  # type: ignore[no-any-return]


def node_annotation(admin: Connection, name: str) -> str | None:
    node = admin.request("GET", f"/api/v1/nodes/{name}")
    return (node["metadata"].get("annotations") or {}).get(KEY)


def effective_cpu_threshold(cluster: Cluster, node: str) -> tuple[float, str]:
    """The engine's LoadAware cpu usage threshold for ``node`` in the newest snapshot."""
    clear_caches()
    latest = cluster.latest_snapshot()
    assert latest is not None
    snapshot = snapshot_for(latest)
    thresholds = NodeThresholds(snapshot, LoadAwareArgs(), ("cpu", "memory"))
    profile = thresholds.profile(snapshot.node_names.index(node))
    return float(profile.usage[0]), profile.usage_source


def test_full_cycle_through_the_api_and_a_worker(
    committed_db: None,  # noqa: F811
    kube: KubeServer,
    seeded: list[Json],
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    unique: Callable[[str], str],
    workers: Callable[[], Worker],  # noqa: F811
    api_client: Any,
) -> None:
    nodes = scratch_nodes(2)
    operator = User.objects.create_user(unique("otto"))
    operator.groups.add(Group.objects.get(name="operator"))
    cluster = Cluster.objects.create(
        name=unique("cycle"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
    )
    workers()
    api_client.force_login(operator)

    # Read the cluster back: a snapshot with every node, pending pods evaluated.
    response = api_client.post(f"/api/v1/clusters/{cluster.pk}/refresh/")
    assert response.status_code == 202, response.content
    job = finished(api_client, response.json()["id"])
    assert job["status"] == "succeeded", job
    first = ClusterSnapshot.snapshots.get(pk=job["snapshot"])
    names = {o["metadata"]["name"] for o in first.objects if o["kind"] == "Node"}
    assert set(nodes) <= names and first.node_count == len(names) >= 12
    wait_for(
        lambda: PlacementDecision.objects.filter(cluster=cluster, source="worker").exists(),
        30,
        "pending pods evaluated",
    )

    # Edit a threshold (as an editor would) and look at the dry-run first.
    response = api_client.post(
        "/api/v1/node-threshold-policies/",
        {
            "cluster": cluster.pk,
            "name": "scratch",
            "node_names": nodes,
            "usage_thresholds": {"cpu": 37},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    plan = api_client.post(f"/api/v1/clusters/{cluster.pk}/sync/plan/").json()
    assert plan["status"] == "succeeded", plan
    want = json.dumps({"usageThresholds": {"cpu": 37}}, separators=(",", ":"))
    assert [(c["name"], c["action"], c["after"]) for c in plan["changes"]] == [
        (name, "add", want) for name in sorted(nodes)
    ]
    assert all(node_annotation(admin, name) is None for name in nodes)

    # Push: a job, then the annotation on each node.
    response = api_client.post(f"/api/v1/clusters/{cluster.pk}/sync/")
    assert response.status_code == 202
    job = finished(api_client, response.json()["id"])
    assert job["status"] == "succeeded", job
    assert [c["name"] for c in job["changes"]] == sorted(nodes)
    assert all(node_annotation(admin, name) == want for name in nodes)
    listed = api_client.get(f"/api/v1/sync-jobs/?cluster={cluster.pk}&kind=push").json()
    assert [j["id"] for j in listed["results"]] == [job["id"]]

    # Re-read: the engine sees the new effective threshold on the node.
    job = finished(
        api_client, api_client.post(f"/api/v1/clusters/{cluster.pk}/refresh/").json()["id"]
    )
    assert job["status"] == "succeeded", job
    cpu, source = effective_cpu_threshold(cluster, nodes[0])
    assert cpu == 37.0 and "annotation" in source, (cpu, source)
    drift = api_client.get(f"/api/v1/clusters/{cluster.pk}/drift/").json()
    assert drift["drifted"] is False and drift["snapshot"]["age_seconds"] >= 0

    # Someone edits a managed annotation by hand: the next refresh flags it, with the diff.
    admin.request(
        "PATCH",
        f"/api/v1/nodes/{nodes[1]}",
        body={"metadata": {"annotations": {KEY: '{"usageThresholds":{"cpu":90}}'}}},
        content_type=MERGE_PATCH,
    )
    finished(api_client, api_client.post(f"/api/v1/clusters/{cluster.pk}/refresh/").json()["id"])
    drift = api_client.get(f"/api/v1/clusters/{cluster.pk}/drift/").json()
    assert drift["drifted"] is True
    [item] = drift["drift"]
    assert item["name"] == nodes[1] and item["expected"] == want
    assert '"cpu": 90' in item["diff"] and '"cpu": 37' in item["diff"]
    assert SyncJob.objects.filter(cluster=cluster, status="failed").count() == 0
