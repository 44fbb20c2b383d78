"""Sync in a real browser: an operator pushes the demo cluster through the confirmation page,
sees the job succeed and the policies become synced; a viewer sees the statuses but no push
control; an unfinished job's page follows the job until it finishes. Screenshots go to
``artifacts/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from policy.accounts.models import AuthorizationFailure
from policy.clusters.services import load_demo_cluster
from policy.policies.models import NodeThresholdPolicy
from policy.sync.models import SyncJob, SyncJobKind, SyncJobStatus
from tests.personas import create_user as make_user
from tests.policy.builders import unpushed_policies
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]


@pytest.fixture
def policy(transactional_db: None, celery_eager: None) -> Iterator[NodeThresholdPolicy]:
    """The demo cluster with a LoadAware profile and a threshold policy on two of its nodes,
    made through the services, never pushed."""
    snapshot = load_demo_cluster(nodes=30)
    nodes = sorted(obj["metadata"]["name"] for obj in snapshot.objects if obj["kind"] == "Node")
    yield unpushed_policies(snapshot.cluster, nodes[:2])


def sync_badges(page: Any) -> list[str]:
    """The sync badges' visible texts (after the hidden "Sync status:" for screen readers)."""
    texts = page.locator("a.badge[class*='sync-']").all_inner_texts()
    return [text.replace("Sync status:", "").strip() for text in texts]


def test_operator_pushes_the_demo_cluster_through_the_confirmation(
    page: Any, live_server: Any, policy: NodeThresholdPolicy, screenshot: Shot
) -> None:
    make_user("otto", "operator")
    log_in(page, live_server, "otto")
    assert page.get_by_role("link", name="Sync status: pending").first.is_visible()  # header
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Policies").click()
    page.wait_for_url(re.compile(r"/policies/"))
    assert sync_badges(page) == ["pending"] * 4  # the cluster, configuration, profile, policy

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sync").click()
    page.wait_for_url(f"{live_server.url}/clusters/{policy.cluster_id}/sync/")
    assert page.title() == "Sync of demo · schedboard"
    assert page.get_by_text("Never pushed to the cluster.").first.is_visible()
    screenshot(page, "sync-cluster-pending")

    page.get_by_role("button", name="Push to cluster…").click()
    page.wait_for_url(re.compile(r"/sync/plan/\d+/$"))
    assert page.title() == "Push demo? · schedboard"
    changes = page.get_by_role("table")
    assert "3 changes to 3 objects: 3 add" in changes.locator("caption").inner_text()
    row = changes.get_by_role("row").filter(has_text="2 Nodes")  # the same change: one line
    assert '{"usageThresholds":{"cpu":55,"memory":80}}' in row.inner_text()
    assert all(node in row.inner_text() for node in policy.node_names)
    yaml_diff = page.locator("pre.diff .d-add").filter(has_text="kind: KubeSchedulerConfiguration")
    assert yaml_diff.first.is_visible()
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()  # reviewing pushes nothing
    screenshot(page, "sync-push-confirmation")

    page.get_by_role("button", name="Confirm push").click()
    page.wait_for_url(re.compile(r"/sync/jobs/\d+/$"))
    job = SyncJob.objects.get(kind=SyncJobKind.PUSH)
    assert page.url.endswith(f"/sync/jobs/{job.pk}/")
    status = page.locator("#job-status")
    assert "Succeeded" in status.inner_text()
    assert job.status == SyncJobStatus.SUCCEEDED and job.requested_by is not None
    assert page.get_by_role("heading", name="Changes written").is_visible()
    screenshot(page, "sync-job-succeeded")

    page.get_by_role("link", name="Sync of demo").click()
    page.wait_for_url(f"{live_server.url}/clusters/{policy.cluster_id}/sync/")
    assert sync_badges(page) == ["synced"] * 4
    assert page.get_by_role("cell", name="succeeded").first.is_visible()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Policies").click()
    page.wait_for_url(re.compile(r"/policies/"))
    assert sync_badges(page) == ["synced"] * 4
    page.get_by_role("link", name="hot-pool").click()
    page.wait_for_url(re.compile(r"/policies/thresholds/\d+/$"))
    assert page.get_by_role("link", name="Sync status: synced").is_visible()
    assert page.get_by_text(f"Pushed by push #{job.pk}.").is_visible()
    screenshot(page, "sync-policy-synced")


def test_viewer_sees_the_status_but_no_push_control(
    page: Any, live_server: Any, policy: NodeThresholdPolicy, screenshot: Shot
) -> None:
    now = timezone.now()
    failed = SyncJob.objects.create(
        cluster=policy.cluster,
        kind=SyncJobKind.PUSH,
        status=SyncJobStatus.FAILED,
        started=now,
        finished=now,
        error="ForbiddenError (HTTP 403): nodes is forbidden",
    )
    make_user("vera", "viewer")
    log_in(page, live_server, "vera")
    header = page.locator(".sync-head")
    assert "failed" in header.inner_text() and "nodes is forbidden" in header.inner_text()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sync").click()
    page.wait_for_url(f"{live_server.url}/clusters/{policy.cluster_id}/sync/")
    assert sync_badges(page) == ["failed"] * 4
    assert page.get_by_role("button", name="Push to cluster…").count() == 0
    assert page.get_by_role("button", name="Refresh from cluster").count() == 0
    screenshot(page, "sync-cluster-viewer-failed")
    page.get_by_role("link", name=f"push #{failed.pk}").first.click()
    page.wait_for_url(re.compile(rf"/sync/jobs/{failed.pk}/$"))
    assert page.get_by_role("alert").filter(has_text="nodes is forbidden").is_visible()
    # The server refuses the push even without the button (and keeps the refusal).
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        f"{live_server.url}/clusters/{policy.cluster_id}/sync/plan/",
        headers={"X-CSRFToken": token},
    )
    assert response.status == 403
    assert AuthorizationFailure.objects.filter(user_name="vera", method="POST").exists()
    assert not SyncJob.objects.filter(kind=SyncJobKind.DRY_RUN).exists()


def test_an_unfinished_job_page_follows_the_job(
    page: Any, live_server: Any, policy: NodeThresholdPolicy
) -> None:
    job = SyncJob.objects.create(cluster=policy.cluster, kind=SyncJobKind.PUSH)
    make_user("vera", "viewer")
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/clusters/{policy.cluster_id}/sync/jobs/{job.pk}/")
    assert "Queued" in page.locator("#job-status").inner_text()
    assert page.get_by_role("link", name="Reload to see its progress").is_visible()
    now = timezone.now()
    SyncJob.objects.filter(pk=job.pk).update(
        status=SyncJobStatus.SUCCEEDED, started=now, finished=now, log="done\n"
    )
    # The script notices and reloads the page.
    page.locator("[data-job-status=succeeded]").wait_for()
    assert "Finished" in page.locator("#job-status").inner_text()
    assert page.get_by_role("link", name="Reload to see its progress").count() == 0
    assert "done" in page.get_by_label("Job log").inner_text()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_the_sync_page_says_when_the_last_refresh_adopted_no_configuration(
    page: Any, live_server: Any, transactional_db: None, viewport: dict[str, int], screenshot: Shot
) -> None:
    """A refresh that found nothing at the ConfigMap key the cluster names says so on the
    Sync page, linked to its job, without opening the job's log."""
    cluster = load_demo_cluster(nodes=12).cluster
    note = (
        "no scheduler configuration at kube-system/sched:config.yaml: nothing adopted (is "
        "that the key the scheduler reads? the cluster's settings name it)"
    )
    job = SyncJob.objects.create(
        cluster=cluster,
        kind=SyncJobKind.REFRESH,
        status=SyncJobStatus.SUCCEEDED,
        finished=timezone.now(),
        notes=[note, "drift: 0"],
    )
    page.set_viewport_size(viewport)
    make_user("vera", "viewer")
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/sync/")
    notice = page.locator("section[aria-labelledby='refresh-notes-h']")
    assert "No scheduler configuration at kube-system/sched:config.yaml" in notice.inner_text()
    assert "drift" not in notice.inner_text()  # drift has its own section
    assert page.evaluate(WIDEST) is None
    notice.get_by_role("link", name=f"job {job.pk}").click()
    page.wait_for_url(re.compile(rf"/sync/jobs/{job.pk}/$"))
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"sync-refresh-notes-{viewport['width']}")
