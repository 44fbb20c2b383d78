"""The sync pages with Django's test client: status badges wherever a policy is shown, the
cluster's sync page, "Push to cluster" through its confirmation (operators only, 403 for the
others), a stale plan refused, nothing to push, a failed push's error, refresh and job pages."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from policy.accounts.changes import ChangeContext
from policy.accounts.models import AuthorizationFailure
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.policies import services as policies
from policy.policies.models import NodeThresholdPolicy
from policy.sync.confirmation import plan_digest
from policy.sync.models import SyncJob, SyncJobKind, SyncJobStatus
from tests.policy.builders import unpushed_policies

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()
THRESHOLDS = policies.NodeThresholdPolicyService()


@pytest.fixture
def policy(demo_snapshot: ClusterSnapshot) -> NodeThresholdPolicy:
    return unpushed_policies(demo_snapshot.cluster, ["general-a-0003", "general-a-0006"])


def html_of(response: Any) -> str:
    return str(response.content.decode())


def badges(html: str) -> list[str]:
    """The sync badges' texts, in page order."""
    return [
        re.sub(r"<[^>]+>", "", text).replace("Sync status: ", "").strip()
        for text in re.findall(r'<a class="badge sync-\w+"[^>]*>(.*?)</a>', html)
    ]


def sync_url(policy: NodeThresholdPolicy, suffix: str = "") -> str:
    return f"/clusters/{policy.cluster_id}/sync/{suffix}"


# -- who sees and may do what ---------------------------------------------------------------------


def test_viewer_sees_statuses_but_no_push_control_and_is_refused(
    client: Client, viewer: User, policy: NodeThresholdPolicy
) -> None:
    client.force_login(viewer)
    response = client.get(sync_url(policy))
    assert response.status_code == 200
    html = html_of(response)
    assert "<title>Sync of demo · schedboard</title>" in html
    assert badges(html) == ["pending"] * 4  # the cluster, configuration, profile, policy
    assert "Never pushed to the cluster." in html
    assert "Push to cluster" not in html and "Refresh from cluster" not in html
    assert "/sync/plan/" not in html and "/sync/refresh/" not in html
    assert 'href="/sync/?cluster=' in html and 'aria-current="page">Sync</a>' in html

    jobs = SyncJob.objects.count()
    for path in ("plan/", "push/", "refresh/"):
        assert client.post(sync_url(policy, path), {"plan": "1"}).status_code == 403
    plan = SyncJob.objects.create(cluster=policy.cluster, kind=SyncJobKind.DRY_RUN)
    assert client.get(sync_url(policy, f"plan/{plan.pk}/")).status_code == 403
    assert SyncJob.objects.count() == jobs + 1  # only the one made here
    refused = AuthorizationFailure.objects.order_by("id")
    assert [(f.user_name, f.method, f.path) for f in refused][:3] == [
        ("vera", "POST", sync_url(policy, "plan/")),
        ("vera", "POST", sync_url(policy, "push/")),
        ("vera", "POST", sync_url(policy, "refresh/")),
    ]


def test_editor_may_refresh_but_not_push(
    client: Client, editor: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    client.force_login(editor)
    html = html_of(client.get(sync_url(policy)))
    assert "Refresh from cluster" in html and "Push to cluster" not in html
    assert client.post(sync_url(policy, "plan/")).status_code == 403
    with run_on_commit():
        response = client.post(sync_url(policy, "refresh/"))
    job = SyncJob.objects.get(kind=SyncJobKind.REFRESH)
    assert response.status_code == 302
    assert response["Location"] == sync_url(policy, f"jobs/{job.pk}/")
    assert job.status == SyncJobStatus.SUCCEEDED and job.requested_by == editor
    page = html_of(client.get(response["Location"]))
    assert "Refresh #" in page and "Succeeded" in page and "data-poll" not in page
    # The drift card now says when it was checked.
    assert "The cluster has what schedboard last wrote." in html_of(client.get(sync_url(policy)))


def test_sync_index_goes_to_the_selected_cluster(
    client: Client, viewer: User, policy: NodeThresholdPolicy
) -> None:
    client.force_login(viewer)
    response = client.get("/sync/")
    assert response.status_code == 302 and response["Location"] == sync_url(policy)
    assert client.get("/sync/?cluster=999").status_code == 404


def test_sync_index_without_clusters(client: Client, viewer: User) -> None:
    client.force_login(viewer)
    response = client.get("/sync/")
    assert response.status_code == 200 and "load_demo_cluster" in html_of(response)


# -- the operator's push --------------------------------------------------------------------------


def test_operator_plans_confirms_and_the_policies_become_synced(
    client: Client, operator: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    client.force_login(operator)
    index = html_of(client.get(f"/policies/?cluster={policy.cluster_id}"))
    assert badges(index) == ["pending"] * 4
    html = html_of(client.get(sync_url(policy)))
    assert "Push to cluster…" in html

    response = client.post(sync_url(policy, "plan/"))
    plan = SyncJob.objects.get(kind=SyncJobKind.DRY_RUN)
    assert response.status_code == 302
    assert response["Location"] == sync_url(policy, f"plan/{plan.pk}/")
    assert SyncJob.objects.filter(kind=SyncJobKind.PUSH).count() == 0  # nothing pushed yet

    review = client.get(response["Location"])
    assert review.status_code == 200
    html = html_of(review)
    assert "3 changes to 3 objects: 3 add" in html
    assert "ConfigMap/koordinator-system/koord-scheduler-config" in html
    # The nodes get the same annotation: one line, naming them.
    group = html.split('data-count="2"')[1].split("</tr>")[0]
    assert "<strong>2</strong> Nodes" in group
    assert ", ".join(sorted(policy.node_names)) in group
    assert "{&quot;usageThresholds&quot;:{&quot;cpu&quot;:55,&quot;memory&quot;:80}}" in html
    assert 'class="d-add">+apiVersion: kubescheduler.config.k8s.io/v1' in html  # YAML diff
    assert "Confirm push" in html and "Cancel" in html
    assert f'name="plan" value="{plan.pk}"' in html  # the confirmation names the dry-run

    with run_on_commit():
        response = client.post(sync_url(policy, "push/"), {"plan": plan.pk})
    job = SyncJob.objects.get(kind=SyncJobKind.PUSH)
    assert response.status_code == 302
    assert response["Location"] == sync_url(policy, f"jobs/{job.pk}/")
    assert job.status == SyncJobStatus.SUCCEEDED and job.requested_by == operator
    # The push carried the reviewed changes as its limit (policy.sync.confirmation).
    assert plan_digest(job.confirmed_changes or []) == plan_digest(plan.changes)
    page = client.get(response["Location"])
    html = html_of(page)
    assert f"Push #{job.pk} of demo requested." in html
    assert "Succeeded" in html and "Changes written" in html and "Log" in html
    assert "applied 3 change(s)" in html

    index = html_of(client.get(f"/policies/?cluster={policy.cluster_id}"))
    assert badges(index) == ["synced"] * 4
    detail = html_of(client.get(f"/policies/thresholds/{policy.pk}/"))
    assert badges(detail) == ["synced"] and f"Pushed by push #{job.pk}." in detail
    dashboard = html_of(client.get(f"/?cluster={policy.cluster_id}"))
    assert badges(dashboard) == ["synced"]

    # An edit makes that policy (and the cluster) pending again; the others stay synced.
    THRESHOLDS.update(policy.pk, {"usage_thresholds": {"cpu": 60}}, SYSTEM, expected_version=None)
    edit = html_of(client.get(f"/policies/thresholds/{policy.pk}/edit/"))
    assert badges(edit) == ["pending"]
    sync_page = html_of(client.get(sync_url(policy)))
    assert badges(sync_page) == ["pending", "synced", "synced", "pending"]
    assert "Changed since the last push." in sync_page


def test_a_stale_plan_is_not_pushed(
    client: Client, operator: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    client.force_login(operator)
    review = client.get(client.post(sync_url(policy, "plan/"))["Location"])
    reviewed = review.context["plan"].pk
    # Someone changes the policy while the operator reads the plan.
    THRESHOLDS.update(policy.pk, {"usage_thresholds": {"cpu": 42}}, SYSTEM, expected_version=None)
    with run_on_commit():
        response = client.post(sync_url(policy, "push/"), {"plan": reviewed})
    assert response.status_code == 409
    html = html_of(response)
    assert "the cluster or policies changed since you reviewed this plan" in html
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()
    # The new plan is shown, confirmed by its own id.
    assert "{&quot;usageThresholds&quot;:{&quot;cpu&quot;:42}}" in html
    new_plan = response.context["plan"].pk
    assert new_plan != reviewed and "Confirm push" in html
    assert f'name="plan" value="{new_plan}"' in html
    with run_on_commit():
        response = client.post(sync_url(policy, "push/"), {"plan": new_plan})
    assert response.status_code == 302
    assert SyncJob.objects.get(kind=SyncJobKind.PUSH).status == SyncJobStatus.SUCCEEDED


def test_nothing_to_push_offers_no_confirmation(
    client: Client, operator: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    client.force_login(operator)
    review = client.get(client.post(sync_url(policy, "plan/"))["Location"])
    with run_on_commit():
        client.post(sync_url(policy, "push/"), {"plan": review.context["plan"].pk})
    # A new version that writes the same annotation: pending until a plan shows it is there.
    THRESHOLDS.update(policy.pk, {"description": "the hot pool"}, SYSTEM, expected_version=None)
    assert "pending" in badges(html_of(client.get(sync_url(policy))))
    response = client.get(client.post(sync_url(policy, "plan/"))["Location"])
    html = html_of(response)
    assert "Nothing to push" in html and "Confirm push" not in html
    assert badges(html_of(client.get(sync_url(policy)))) == ["synced"] * 4
    # A confirmation posted anyway pushes nothing.
    pushes = SyncJob.objects.filter(kind=SyncJobKind.PUSH).count()
    response = client.post(sync_url(policy, "push/"), {"plan": response.context["plan"].pk})
    assert response.status_code == 200 and "Nothing to push" in html_of(response)
    assert SyncJob.objects.filter(kind=SyncJobKind.PUSH).count() == pushes


def test_a_failed_dry_run_offers_no_confirmation(
    client: Client, operator: User, policy: NodeThresholdPolicy
) -> None:
    ClusterSnapshot.snapshots.filter(cluster_id=policy.cluster_id).delete()
    client.force_login(operator)
    response = client.get(client.post(sync_url(policy, "plan/"))["Location"])
    html = html_of(response)
    assert "The dry-run failed: nothing can be pushed" in html
    assert "has no snapshot" in html and "Confirm push" not in html
    assert client.post(sync_url(policy, "push/"), {"plan": 999}).status_code == 400
    assert client.post(sync_url(policy, "push/"), {"plan": "²"}).status_code == 400
    done = SyncJob.objects.create(cluster_id=policy.cluster_id, kind=SyncJobKind.DRY_RUN)
    SyncJob.objects.filter(pk=done.pk).update(status=SyncJobStatus.SUCCEEDED)
    response = client.post(sync_url(policy, "push/"), {"plan": done.pk})
    assert response.status_code == 502
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()


def test_a_failed_push_shows_its_error_wherever_the_policy_is(
    client: Client, viewer: User, policy: NodeThresholdPolicy
) -> None:
    now = timezone.now()
    job = SyncJob.objects.create(
        cluster=policy.cluster,
        kind=SyncJobKind.PUSH,
        status=SyncJobStatus.FAILED,
        started=now,
        finished=now,
        error='ForbiddenError (HTTP 403): nodes "general-a-0003" is forbidden',
        log="12:00:00 failed: ForbiddenError\n",
    )
    client.force_login(viewer)
    error = "ForbiddenError (HTTP 403): nodes &quot;general-a-0003&quot; is forbidden"
    job_link = f'href="{sync_url(policy, f"jobs/{job.pk}/")}"'
    for path in (
        f"/policies/?cluster={policy.cluster_id}",
        f"/policies/thresholds/{policy.pk}/",
        f"/?cluster={policy.cluster_id}",
        sync_url(policy),
    ):
        html = html_of(client.get(path))
        assert "failed" in badges(html), path
        assert error in html and job_link in html, path
    page = html_of(client.get(sync_url(policy, f"jobs/{job.pk}/")))
    assert "Failed" in page and error in page and 'role="alert"' in page
    assert "12:00:00 failed: ForbiddenError" in page


def test_an_unfinished_job_page_polls_and_offers_a_reload_link(
    client: Client, viewer: User, policy: NodeThresholdPolicy
) -> None:
    job = SyncJob.objects.create(cluster=policy.cluster, kind=SyncJobKind.PUSH)
    client.force_login(viewer)
    url = sync_url(policy, f"jobs/{job.pk}/")
    html = html_of(client.get(url))
    assert 'data-poll="2"' in html and f'<a href="{url}">Reload to see its progress</a>' in html
    assert badges(html_of(client.get(sync_url(policy))))[:1] == ["pending · push queued"]
    partial = client.get(url, HTTP_X_PARTIAL="status")
    assert 'data-job-status="queued"' in html_of(partial)
    assert "<html" not in html_of(partial)
    other = Cluster.objects.create(name="other")
    assert client.get(f"/clusters/{other.pk}/sync/jobs/{job.pk}/").status_code == 404


def test_job_list_filters_and_pages(
    client: Client, viewer: User, policy: NodeThresholdPolicy
) -> None:
    for _ in range(25):
        SyncJob.objects.create(
            cluster=policy.cluster, kind=SyncJobKind.DRY_RUN, status=SyncJobStatus.SUCCEEDED
        )
    SyncJob.objects.create(cluster=policy.cluster, kind=SyncJobKind.REFRESH)
    client.force_login(viewer)
    response = client.get(sync_url(policy))
    assert response.context["page_obj"].paginator.count == 26
    assert len(response.context["jobs"]) == 20
    assert "Page 1 of 2" in html_of(response)
    response = client.get(sync_url(policy) + "?kind=refresh")
    assert response.context["page_obj"].paginator.count == 1
    assert client.get(sync_url(policy) + "?kind=bogus").context["page_obj"].paginator.count == 26


def test_operators_find_the_add_cluster_page_from_sync(
    client: Client, operator: User, editor: User, policy: NodeThresholdPolicy
) -> None:
    client.force_login(operator)
    assert 'href="/clusters/new/"' in html_of(client.get(sync_url(policy)))
    assert "Add a cluster" in html_of(client.get("/clusters/new/"))
    client.force_login(editor)
    assert 'href="/clusters/new/"' not in html_of(client.get(sync_url(policy)))
    assert client.get("/clusters/new/").status_code == 403


def test_job_list_sorts_by_its_columns(
    client: Client, viewer: User, policy: NodeThresholdPolicy
) -> None:
    for kind, status in (
        (SyncJobKind.REFRESH, SyncJobStatus.SUCCEEDED),
        (SyncJobKind.PUSH, SyncJobStatus.FAILED),
        (SyncJobKind.DRY_RUN, SyncJobStatus.SUCCEEDED),
    ):
        SyncJob.objects.create(cluster=policy.cluster, kind=kind, status=status)
    client.force_login(viewer)

    def kinds(query: str) -> list[str]:
        response = client.get(sync_url(policy) + query)
        return [job.kind for job, _ in response.context["jobs"]]

    assert kinds("") == ["dry-run", "push", "refresh"]  # newest first
    assert kinds("?sort=kind") == ["dry-run", "push", "refresh"]
    assert kinds("?sort=-kind") == ["refresh", "push", "dry-run"]
    assert kinds("?sort=status")[0] == "push"  # failed before succeeded
    html = html_of(client.get(sync_url(policy) + "?sort=-kind&kind="))
    assert 'aria-sort="descending"' in html and "newest first" not in html
    assert '<input type="hidden" name="sort" value="-kind">' in html  # the kind filter keeps it


def test_what_if_list_sorts_by_its_columns(client: Client, viewer: User) -> None:
    from django.utils import timezone

    from policy.decisions.models import WhatIfRun

    cluster = Cluster.objects.create(name="sorted")
    for pods, label in ((5, "b"), (50, "a"), (500, "c")):
        WhatIfRun.objects.create(
            cluster=cluster,
            snapshot_taken_at=timezone.now(),
            workload_source="manifests",
            pod_count=pods,
            baseline_source="defaults",
            baseline_label=label,
            candidate_source="defaults",
            candidate_label="x",
        )
    client.force_login(viewer)

    def counts(query: str) -> list[int]:
        return [run.pod_count for run in client.get(f"/what-if/{query}").context["page"]]

    assert counts("") == [500, 50, 5]  # newest first
    assert counts("?sort=pods") == [5, 50, 500]
    assert counts("?sort=-baseline") == [500, 5, 50]
    assert counts("?sort=bogus") == [500, 50, 5]
