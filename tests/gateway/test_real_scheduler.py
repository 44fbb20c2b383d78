"""A real kube-scheduler v1.20.2 binds pods on the real kube-apiserver while schedboard, connected
with ``add_cluster`` and refreshed by its periodic task, picks up new NodeMetrics and records
what the scheduler did: one ``cluster`` decision per binding, on the snapshot before it, beside
the scheduler's node.

The scheduler serves only its own profile name, so it never touches the seeded pods other
tests rely on. It is built like kube-apiserver (``scripts/kube-apiserver/build.sh
kube-scheduler``); without it the test is skipped, and in CI that is a failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db.models import F

from policy import tasks
from policy.clusters.gateway.connection import MERGE_PATCH, Connection
from policy.clusters.models import Cluster
from policy.decisions.models import PlacementDecision
from policy.policies.models import SchedulerConfiguration, SchedulerProfile
from policy.sync.models import SyncJob, SyncJobKind
from tests.gateway import kubeserver
from tests.gateway.kubeserver import Json, KubeServer, create, ensure_namespaces, pending_pod

PROFILE = "real-scheduler"
METRICS = "/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
NS = "real-scheduler"


@pytest.fixture(scope="module")
def kube_scheduler(kube: KubeServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with kubeserver.kube_scheduler(
        kube, tmp_path_factory.mktemp("kube-scheduler"), [{"schedulerName": PROFILE}]
    ):
        yield


def pod(name: str) -> Json:
    return pending_pod(name, NS, cpu="50m", scheduler=PROFILE)


def node_of(admin: Connection, name: str) -> str | None:
    found: str | None = admin.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")["spec"].get(
        "nodeName"
    )
    return found


@pytest.mark.django_db
def test_the_real_schedulers_bindings_become_decisions(
    kube_scheduler: None,
    kube: KubeServer,
    seeded: list[Json],
    admin: Connection,
    unique: Callable[[str], str],
    run_on_commit: Any,
    scratch_nodes: Callable[..., list[str]],
    request: pytest.FixtureRequest,
) -> None:
    [metric_node] = scratch_nodes(1)
    admin.request(
        "POST",
        METRICS,
        body={
            "apiVersion": "slo.koordinator.sh/v1alpha1",
            "kind": "NodeMetric",
            "metadata": {"name": metric_node},
        },
    )
    request.addfinalizer(lambda: admin.request("DELETE", f"{METRICS}/{metric_node}"))
    name = unique("real")
    call_command("add_cluster", name, "--kubeconfig", str(kube.kubeconfig), stdout=StringIO())
    cluster = Cluster.objects.get(name=name)
    Cluster.objects.filter(pk=cluster.pk).update(refresh_interval_seconds=1)
    configuration = SchedulerConfiguration.objects.create(cluster=cluster)
    SchedulerProfile.objects.create(configuration=configuration, scheduler_name=PROFILE)

    def periodic_refresh() -> None:
        """What the beat does every 15 s, once the 1 s interval has passed: the last refresh is
        moved back past it rather than waited for."""
        earlier = SyncJob.objects.filter(cluster=cluster, kind=SyncJobKind.REFRESH)
        earlier.update(created=F("created") - timedelta(seconds=2))
        with run_on_commit():
            assert tasks.refresh_clusters.apply().get() == [cluster.pk]

    periodic_refresh()
    ensure_namespaces(admin, [NS])
    names = [unique(f"web-{i}") for i in range(3)]
    for pod_name in names:
        create(admin, pod(pod_name))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(node_of(admin, n) for n in names):
        time.sleep(0.5)
    bound = {n: node_of(admin, n) for n in names}
    assert all(bound.values()), f"kube-scheduler did not bind the pods: {bound}"
    # Meanwhile koordlet reports new usage on a node (its own node: the seeded objects are
    # other tests' expectations).
    name_of_metric = metric_node
    usage = {"status": {"nodeMetric": {"nodeUsage": {"resources": {"cpu": "1234m"}}}}}
    admin.request(
        "PATCH",
        f"{METRICS}/{name_of_metric}/status",
        body=usage,
        content_type=MERGE_PATCH,
    )

    periodic_refresh()
    latest = cluster.latest_snapshot()
    assert latest is not None
    [seen] = [
        o
        for o in latest.objects
        if o["kind"] == "NodeMetric" and o["metadata"]["name"] == name_of_metric
    ]
    assert seen["status"]["nodeMetric"]["nodeUsage"]["resources"]["cpu"] == "1234m"
    decisions = {
        d.pod_name: d for d in PlacementDecision.objects.filter(cluster=cluster, source="cluster")
    }
    assert set(decisions) == set(names)
    for pod_name, decision in decisions.items():
        assert decision.actual_node == bound[pod_name]
        assert decision.agreement in ("agrees", "disagrees")
        assert decision.profile == PROFILE
