"""A push changes only the colocation-config collect fields its policy sets, against the real
kube-apiserver: a field schedboard never wrote (Koordinator's aggregate duration, say) stays
exactly as found; one it wrote and no longer sets is removed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from policy.clusters.gateway.connection import MERGE_PATCH, Connection
from policy.clusters.gateway.informer import ClusterInformer
from policy.clusters.gateway.readback import version_signature
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.policies.models import NodeMetricCollectPolicy
from policy.sync import services as sync_services
from policy.sync.models import ClusterSyncState, SyncJob
from tests.gateway.kubeserver import KubeServer, create, ensure_namespaces

NAMESPACE = "koordinator-system"
KEY = "colocation-config"


def colocation(admin: Connection, name: str) -> dict[str, Any]:
    configmap = admin.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}")
    value: dict[str, Any] = json.loads(configmap["data"][KEY])
    return value


@pytest.fixture
def cluster(kube: KubeServer, admin: Connection, unique: Callable[[str], str]) -> Cluster:
    """A cluster whose slo-controller-config has an aggregate duration nobody here wrote."""
    ensure_namespaces(admin, [NAMESPACE])
    name = unique("slo")
    found = {
        "enable": True,
        "metricAggregateDurationSeconds": 300,
        "cpuReclaimThresholdPercent": 60,
    }
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "data": {KEY: json.dumps(found)},
    }
    create(admin, configmap)
    return Cluster.objects.create(
        name=unique("collect"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
        slo_config_namespace=NAMESPACE,
        slo_config_name=name,
    )


@pytest.mark.django_db
def test_a_push_changes_only_the_collect_fields_its_policy_sets(
    cluster: Cluster, admin: Connection, push_now: Callable[[Cluster], Any]
) -> None:
    policy = NodeMetricCollectPolicy.objects.create(
        cluster=cluster, name="default", is_default=True, report_interval_seconds=25
    )
    job = push_now(cluster)
    assert job.status == "succeeded", job.log
    assert [(c["field"], c["action"]) for c in job.changes] == [(f"data[{KEY}]", "update")]
    assert colocation(admin, cluster.slo_config_name) == {
        "enable": True,
        "metricAggregateDurationSeconds": 300,  # not the policy's: kept
        "cpuReclaimThresholdPercent": 60,
        "metricReportIntervalSeconds": 25,
    }
    state = ClusterSyncState.objects.get(cluster=cluster)
    assert state.owned_collect_fields == ["metricReportIntervalSeconds"]

    # The policy moves to the aggregate duration: the interval it wrote goes, the duration
    # is now its own.
    policy.report_interval_seconds = None
    policy.aggregate_duration_seconds = 600
    policy.save()
    assert push_now(cluster).status == "succeeded"
    assert colocation(admin, cluster.slo_config_name) == {
        "enable": True,
        "metricAggregateDurationSeconds": 600,
        "cpuReclaimThresholdPercent": 60,
    }

    # No policy any more: what schedboard wrote is removed, nothing else; then nothing to do.
    policy.delete()
    assert push_now(cluster).status == "succeeded"
    assert colocation(admin, cluster.slo_config_name) == {
        "enable": True,
        "cpuReclaimThresholdPercent": 60,
    }
    state.refresh_from_db()
    assert state.owned_collect_fields == []
    again = push_now(cluster)
    assert again.status == "succeeded" and again.changes == []


@pytest.mark.django_db
def test_a_hand_edit_of_a_collect_field_schedboard_wrote_is_drift(
    cluster: Cluster, admin: Connection, push_now: Callable[[Cluster], Any], run_on_commit: Any
) -> None:
    """Another field of colocation-config is someone else's business; the report interval
    schedboard wrote, edited by hand, is drift (the next push would undo it)."""
    NodeMetricCollectPolicy.objects.create(
        cluster=cluster, name="default", is_default=True, report_interval_seconds=25
    )
    assert push_now(cluster).status == "succeeded"
    # The push is read back at once: drift and the snapshot show what it wrote.
    [after_push] = SyncJob.objects.filter(cluster=cluster, kind="refresh")
    assert (after_push.trigger, after_push.status) == ("after-push", "succeeded")

    def refreshed_drift() -> list[dict[str, Any]]:
        with run_on_commit():
            job = sync_services.refresh(cluster)
        job.refresh_from_db()
        assert job.status == "succeeded", job.log
        drift: list[dict[str, Any]] = ClusterSyncState.objects.get(cluster=cluster).drift
        return drift

    assert refreshed_drift() == []
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps/{cluster.slo_config_name}"
    configmap = admin.request("GET", path)
    edited = {**json.loads(configmap["data"][KEY]), "cpuReclaimThresholdPercent": 70}
    configmap["data"][KEY] = json.dumps(edited)
    admin.request("PUT", path, body=configmap)
    assert refreshed_drift() == []  # not a field schedboard manages
    configmap = admin.request("GET", path)
    configmap["data"][KEY] = json.dumps({**edited, "metricReportIntervalSeconds": 45})
    admin.request("PUT", path, body=configmap)
    [drift] = refreshed_drift()
    assert drift["field"] == f"data[{KEY}] metricReportIntervalSeconds"
    assert (drift["expected"], drift["actual"]) == ("25", "45")


@pytest.mark.django_db
def test_a_refresh_that_finds_nothing_changed_stores_no_snapshot(
    cluster: Cluster,
    admin: Connection,
    run_on_commit: Any,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    [node] = scratch_nodes(1)

    def refresh() -> Any:
        with run_on_commit():
            job = sync_services.refresh(cluster)
        job.refresh_from_db()
        assert job.status == "succeeded", job.log
        return job

    first = refresh()
    assert "listed Node, Pod, NodeMetric" in first.log  # the worker's first read lists
    again = refresh()
    assert again.snapshot_id == first.snapshot_id
    assert "nothing changed since snapshot" in again.log
    assert "listed" not in again.log  # later reads watch
    body = {"metadata": {"labels": {"example.com/moved": "yes"}}}
    admin.request("PATCH", f"/api/v1/nodes/{node}", body=body, content_type=MERGE_PATCH)
    changed = refresh()
    assert changed.snapshot_id != first.snapshot_id
    assert "watched 1 change(s)" in changed.log and "listed" not in changed.log
    # Stored as that one change against the first snapshot, and read back whole.
    assert f"1 change(s) since snapshot {first.snapshot_id}" in changed.log
    stored = ClusterSnapshot.snapshots.summaries().get(pk=changed.snapshot_id)
    assert stored.keyframe_id == first.snapshot_id and len(stored.changes["put"]) == 1
    assert version_signature(stored.objects) == ClusterInformer().read(admin).signature
    [moved] = [o for o in stored.objects if o["kind"] == "Node" and o["metadata"]["name"] == node]
    assert moved["metadata"]["labels"]["example.com/moved"] == "yes"
    assert cluster.snapshots.count() == 2
