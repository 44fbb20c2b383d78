"""What the cluster's scheduler did, against the real kube-apiserver: pods bound between two
refreshes (here by the Binding API, as kube-scheduler binds) are recorded with source
``cluster``, the engine's decision on the snapshot before the binding, and whether it agrees."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from policy.clusters.gateway.connection import MERGE_PATCH, Connection
from policy.clusters.models import Cluster
from policy.decisions import evaluation
from policy.decisions.models import PlacementDecision
from policy.sync import services as sync_services
from tests.gateway.kubeserver import Json, KubeServer, create, ensure_namespaces, pending_pod

NS = "observed"


def pod(name: str) -> Json:
    return pending_pod(name, NS)


def bind(admin: Connection, name: str, node: str) -> None:
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": NS},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    admin.request("POST", f"/api/v1/namespaces/{NS}/pods/{name}/binding", body=binding)


@pytest.mark.django_db
def test_bindings_between_refreshes_are_recorded_with_agreement(
    kube: KubeServer,
    seeded: list[Json],
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    unique: Callable[[str], str],
    run_on_commit: Any,
) -> None:
    cluster = Cluster.objects.create(
        name=unique("observed"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
    )
    ensure_namespaces(admin, [NS])
    [cordoned] = scratch_nodes(1)
    admin.request(
        "PATCH",
        f"/api/v1/nodes/{cordoned}",
        body={"spec": {"unschedulable": True}},
        content_type=MERGE_PATCH,
    )
    agreeing, filtered = unique("agreeing"), unique("filtered")
    for name in (agreeing, filtered):
        create(admin, pod(name))

    def refresh() -> None:
        with run_on_commit():
            job = sync_services.refresh(cluster)
        job.refresh_from_db()
        assert job.status == "succeeded", job.log

    refresh()  # both pods pending
    before = cluster.latest_snapshot()
    assert before is not None
    best = evaluation.run(cluster, pod(agreeing), on=before).selected_node
    assert best is not None
    bind(admin, agreeing, best)  # where the engine would have put it
    bind(admin, filtered, cordoned)  # where the engine would not
    refresh()
    observed = {
        d.pod_name: d for d in PlacementDecision.objects.filter(cluster=cluster, source="cluster")
    }
    assert set(observed) == {agreeing, filtered}
    good = observed[agreeing]
    assert (good.actual_node, good.agreement, good.actual_rank, good.score_gap) == (
        best,
        "agrees",
        1,
        0,
    )
    assert good.snapshot_id == before.pk  # decided on the cluster as it was before
    bad = observed[filtered]
    assert (bad.actual_node, bad.agreement, bad.actual_rank) == (cordoned, "disagrees", None)
    refresh()  # the same bindings are not recorded twice
    assert PlacementDecision.objects.filter(cluster=cluster, source="cluster").count() == 2


@pytest.mark.django_db
def test_a_pending_pods_failedscheduling_event_is_shown_beside_the_engines_reasons(
    kube: KubeServer,
    seeded: list[Json],
    admin: Connection,
    unique: Callable[[str], str],
    run_on_commit: Any,
    client: Any,
    viewer: Any,
) -> None:
    cluster = Cluster.objects.create(
        name=unique("failing"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
    )
    ensure_namespaces(admin, [NS])
    name = unique("huge")
    huge = pod(name)
    huge["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "5000"
    created = create(admin, huge)
    said = "0/14 nodes are available: 14 Insufficient cpu."
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.failed", "namespace": NS},
        "involvedObject": {
            "kind": "Pod",
            "namespace": NS,
            "name": name,
            "uid": created["metadata"]["uid"],
        },
        "reason": "FailedScheduling",
        "message": said,
        "type": "Warning",
        "source": {"component": "default-scheduler"},
        "lastTimestamp": "2026-11-25T09:00:00Z",
    }
    admin.request("POST", f"/api/v1/namespaces/{NS}/events", body=event)
    with run_on_commit():
        job = sync_services.refresh(cluster)
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    decision = PlacementDecision.objects.get(cluster=cluster, source="worker", pod_name=name)
    assert decision.scheduler_message == said and decision.outcome == "unschedulable"
    client.force_login(viewer)
    page = client.get(f"/decisions/{decision.pk}/").content.decode()
    assert "The cluster's scheduler says:" in page and said in page
