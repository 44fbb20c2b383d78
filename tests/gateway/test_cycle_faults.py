"""Sync jobs under faults, against the real kube-apiserver behind the fault-injecting proxy:
500s and timeouts are retried and the job succeeds; a permanent error fails fast with the
API's message; a concurrent writer's 409 is re-read; a worker killed mid-push leaves no
half-written state and the retried job completes."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from celery.exceptions import Retry
from django.utils import timezone

from policy import tasks
from policy.clusters.gateway.connection import MERGE_PATCH, Connection, Timeouts
from policy.clusters.gateway.retry import RetryPolicy
from policy.clusters.models import Cluster
from policy.policies.models import NodeThresholdPolicy
from policy.sync import appliers, jobs
from policy.sync import services as sync_services
from policy.sync.models import ClusterSyncState, SyncJob
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.gateway.faultproxy import FaultProxy, matching
from tests.gateway.kubeserver import Json, KubeServer
from tests.sync.worker import (  # noqa: F401 (fixtures)
    Worker,
    committed_db,
    wait_for,
    workers,
)

WANT = json.dumps({"usageThresholds": {"cpu": 44}}, separators=(",", ":"))


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        appliers, "RETRY_POLICY", RetryPolicy(attempts=3, base_delay=0.02, max_delay=0.05)
    )
    monkeypatch.setattr(appliers, "TIMEOUTS", Timeouts(2, 0.5))


@pytest.fixture
def needs_broker(settings: Any) -> None:
    """Job retries re-queue through the broker; with eager tasks (no broker) Celery re-runs
    ``retry()`` inline instead, so these tests need one (CI always has Redis)."""
    if not settings.CELERY_BROKER_URL:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs CELERY_BROKER_URL for the sync retry tests")
        pytest.skip("needs a broker: set CELERY_BROKER_URL (e.g. redis://127.0.0.1:6379/0)")


@pytest.fixture
def cluster(
    kube: KubeServer,
    seeded: list[Json],
    proxy: FaultProxy,
    tmp_path: Path,
    unique: Callable[[str], str],
) -> Cluster:
    """A cluster reached through the proxy, with one snapshot already read."""
    kubeconfig = kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")
    return Cluster.objects.create(
        name=unique("faults"),
        kind="kubeconfig",
        kubeconfig_path=str(kubeconfig),
        kubeconfig_context="admin",
    )


def thresholds_on(cluster: Cluster, nodes: list[str]) -> NodeThresholdPolicy:
    return NodeThresholdPolicy.objects.create(
        cluster=cluster, name="faults", node_names=nodes, usage_thresholds={"cpu": 44}
    )


def annotation(admin: Connection, name: str, key: str = KEY) -> str | None:
    node = admin.request("GET", f"/api/v1/nodes/{name}")
    return (node["metadata"].get("annotations") or {}).get(key)


@pytest.mark.django_db
def test_500s_and_timeouts_are_retried_and_the_job_succeeds(
    cluster: Cluster,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    quick: None,
    push_now: Any,
) -> None:
    nodes = scratch_nodes(2)
    thresholds_on(cluster, nodes)
    proxy.fail(2, 500, matching("GET", "/api/v1/nodes"))
    proxy.slow_answer(1, 1.0, matching("PATCH", nodes[0]))  # lands, but the answer times out
    proxy.fail(1, 503, matching("PATCH", nodes[1]))
    job = push_now(cluster)
    assert job.status == "succeeded", job.log
    assert job.attempts == 1
    assert all(annotation(admin, n) == WANT for n in nodes)
    assert "fail 500" in proxy.outcomes("GET", "/api/v1/nodes")
    assert ClusterSyncState.objects.get(cluster=cluster).owned_nodes == sorted(nodes)


@pytest.mark.django_db
def test_when_the_gateway_gives_up_the_job_is_retried_with_backoff(
    needs_broker: None,
    cluster: Cluster,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    quick: None,
    push_now: Any,
) -> None:
    nodes = scratch_nodes(2)
    thresholds_on(cluster, nodes)
    proxy.fail(3, 500, matching("PATCH", nodes[1]))  # more than the gateway's 3 attempts
    with pytest.raises(Retry) as info:  # eager: the retry surfaces instead of being queued
        push_now(cluster)
    assert 0 < float(info.value.when) <= jobs.BACKOFF_CAP  # type: ignore[arg-type]
    job = SyncJob.objects.get(cluster=cluster)
    assert job.status == "queued" and "HTTP 500" in job.error
    assert annotation(admin, nodes[0]) == WANT and annotation(admin, nodes[1]) is None
    assert ClusterSyncState.objects.get(cluster=cluster).owned_nodes == []

    tasks.push_cluster.apply((job.pk,))  # the message comes back after the countdown
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    assert job.attempts == 2
    assert "TransientError (HTTP 500)" in job.log and "retrying in" in job.log
    assert all(annotation(admin, n) == WANT for n in nodes)
    # Every write of the job, each recorded as it landed: the first node by the first
    # attempt, the second by the second (which found the first done).
    assert [c["name"] for c in job.changes] == [nodes[0], nodes[1]]
    assert ClusterSyncState.objects.get(cluster=cluster).owned_nodes == sorted(nodes)


@pytest.mark.django_db
def test_a_permanent_error_fails_fast_with_the_api_message(
    needs_broker: None,
    cluster: Cluster,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    quick: None,
    push_now: Any,
) -> None:
    nodes = scratch_nodes(1)
    thresholds_on(cluster, nodes)
    proxy.fail(1, 403, matching("PATCH", nodes[0]))
    job = push_now(cluster)
    assert job.status == "failed" and job.attempts == 1
    assert "HTTP 403" in job.error and "injected fault 403" in job.error
    state = ClusterSyncState.objects.get(cluster=cluster)
    assert state.last_push is None and state.owned_nodes == [] and state.annotations == {}
    assert annotation(admin, nodes[0]) is None


@pytest.mark.django_db
def test_a_concurrent_writer_conflict_is_re_read_and_its_change_kept(
    needs_broker: None,
    cluster: Cluster,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    quick: None,
    push_now: Any,
) -> None:
    nodes = scratch_nodes(1)
    thresholds_on(cluster, nodes)

    def other_writer() -> None:
        admin.request(
            "PATCH",
            f"/api/v1/nodes/{nodes[0]}",
            body={"metadata": {"annotations": {"example.com/owner": "team-a"}}},
            content_type=MERGE_PATCH,
        )

    proxy.before(other_writer, matching("PATCH", nodes[0]))
    job = push_now(cluster)
    assert job.status == "succeeded", job.log
    patches = proxy.outcomes("PATCH", nodes[0])
    assert patches[0] == "forwarded 409" and patches[-1] == "forwarded 200"
    assert "conflicted" in job.log and "re-reading and re-planning" in job.log  # the 409, too
    assert annotation(admin, nodes[0]) == WANT
    assert annotation(admin, nodes[0], "example.com/owner") == "team-a"


@pytest.mark.django_db
def test_a_concurrent_edit_of_a_field_the_push_writes_fails_the_job_showing_it(
    cluster: Cluster,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    quick: None,
    push_now: Any,
) -> None:
    """Someone sets the threshold on the node between the reviewed plan and the write: the
    push writes nothing over it and fails, naming the node, their value and ours."""
    [node] = scratch_nodes(1)
    thresholds_on(cluster, [node])
    theirs = '{"usageThresholds":{"cpu":91}}'

    def other_writer() -> None:
        body = {"metadata": {"annotations": {KEY: theirs}}}
        admin.request("PATCH", f"/api/v1/nodes/{node}", body=body, content_type=MERGE_PATCH)

    proxy.before(other_writer, matching("PATCH", node))
    job = push_now(cluster)
    assert job.status == "failed" and job.attempts == 1, job.log
    assert f"Node/{node} metadata.annotations[{KEY}] was changed by another client" in job.error
    assert theirs in job.error and WANT in job.error and "Review the new plan" in job.error
    assert annotation(admin, node) == theirs
    state = ClusterSyncState.objects.get(cluster=cluster)
    assert state.last_push is None and state.owned_nodes == []


@pytest.fixture
def blocked() -> Iterator[tuple[threading.Event, threading.Event]]:
    reached, release = threading.Event(), threading.Event()
    yield reached, release
    release.set()


def test_a_worker_killed_mid_push_leaves_no_half_written_state(
    committed_db: None,  # noqa: F811
    cluster: Cluster,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    workers: Callable[[], Worker],  # noqa: F811
    blocked: tuple[threading.Event, threading.Event],
) -> None:
    nodes = scratch_nodes(3)
    thresholds_on(cluster, nodes)
    reached, release = blocked

    def hang() -> None:  # the worker's write of the second node hangs in flight
        reached.set()
        release.wait(30)

    proxy.before(hang, matching("PATCH", nodes[1]))
    first = workers()
    job = sync_services.push(cluster)  # autocommit: sent at once
    assert reached.wait(60), "the push never reached the second node"
    first.kill()
    release.set()  # the in-flight write lands after its worker died, as on a real network

    job.refresh_from_db()
    assert job.status == "running" and job.attempts == 1
    assert annotation(admin, nodes[0]) == WANT and annotation(admin, nodes[2]) is None
    # The first write recorded as it landed; the one in flight and the one after, ahead.
    assert [(c["name"], c.get("inFlight", False)) for c in job.changes] == [
        (nodes[0], False),
        (nodes[1], True),
        (nodes[2], True),
    ]
    state = ClusterSyncState.objects.get(cluster=cluster)
    assert state.last_push is None and state.owned_nodes == [] and state.annotations == {}
    assert state.locked_by_id == job.pk  # the dead worker's lease, until it expires
    assert set(job.claimed_owned["nodes"]) == set(nodes)  # written ahead: ownership not lost

    # The lease runs out; the recovery beat task sends the job again; a new worker finishes.
    past = timezone.now() - timedelta(seconds=1)
    SyncJob.objects.filter(pk=job.pk).update(lease_expires=past)
    ClusterSyncState.objects.filter(cluster=cluster).update(lock_expires=past)
    workers()
    assert jobs.recover() == [job.pk]
    wait_for(  # finished, and its worker let go of the cluster (just after the status)
        lambda: (
            SyncJob.objects.get(pk=job.pk).status in ("succeeded", "failed")
            and ClusterSyncState.objects.get(cluster=cluster).locked_by_id is None
        ),
        60,
        "the retry",
    )
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    assert job.attempts == 2
    # The in-flight write landed unheard: the retry found it done and kept it in the job's
    # changes, and wrote the third.
    assert [c["name"] for c in job.changes] == [nodes[0], nodes[1], nodes[2]]
    assert [c.get("landedUnheard", False) for c in job.changes] == [False, True, False]
    assert not any(c.get("inFlight") for c in job.changes)
    assert all(annotation(admin, n) == WANT for n in nodes)
    state.refresh_from_db()
    assert state.last_push_id == job.pk and state.owned_nodes == sorted(nodes)
    assert state.locked_by is None
    assert state.annotations == dict.fromkeys(nodes, WANT)
