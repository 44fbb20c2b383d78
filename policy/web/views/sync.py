"""Cluster sync pages: where each policy stands, drift, the job history, and "Push to cluster".

Pushing is the operators' (the button is hidden from others, and the server refuses them with
403 too). A push is always confirmed against its dry-run: "Push to cluster" plans and shows
every change; the confirmation form names that dry-run, as the API's ``{"plan": id}`` does
(:func:`policy.sync.services.confirm_push`): confirming plans again and pushes only when the
changes are still that plan's, else it shows the new plan and says why; the push job carries
the confirmed changes and writes nothing if its own plan goes beyond them
(:mod:`policy.sync.confirmation`). A job's page follows it until it finishes (polling with
the script, a reload link without).
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from policy.accounts.changes import ChangeContext, record_denied
from policy.accounts.roles import can_edit_policy, can_push_policy, role_required
from policy.clusters.models import Cluster
from policy.core.choices import Role
from policy.core.params import parse_id
from policy.policies import services as policies
from policy.policies.models import LoadAwareSchedulingArgs, SchedulerConfiguration
from policy.sync import services as sync_services
from policy.sync import status as sync_status
from policy.sync.models import SyncJob, SyncJobKind, SyncJobStatus
from policy.web import sorting
from policy.web.editors import EDITORS
from policy.web.pages import selected_cluster
from policy.web.presenters import sync as present
from policy.web.presenters.policies import diff_lines
from scoring import FLAVORS

JOBS_PER_PAGE = 20
POLL_SECONDS = 2


def _deny(request: HttpRequest, reason: str) -> PermissionDenied:
    """A refused sync request, logged and kept like the API's (it targets a live cluster)."""
    record_denied(
        ChangeContext.from_request(request, ui=True),
        method=request.method or "",
        path=request.path,
        status=403,
        reason=reason,
    )
    return PermissionDenied(reason)


def _require_operator(request: HttpRequest) -> None:
    if not can_push_policy(request.user):
        raise _deny(request, "Pushing policies to a cluster needs the operator role.")


def _job_url(job: SyncJob) -> str:
    return reverse("cluster-sync-job", args=[job.cluster_id, job.pk])


def _policy_rows(cluster: Cluster, jobs: sync_status.ClusterJobs) -> list[dict[str, Any]]:
    """Every policy object of the cluster, in the policies page's order, with its status."""
    objects: list[tuple[str, Any]] = []
    configuration = SchedulerConfiguration.objects.filter(cluster=cluster).first()
    if configuration is not None:
        objects.append(("configurations", configuration))
        for profile in configuration.profiles.select_related("loadaware_args").order_by(
            "position", "id"
        ):
            objects.append(("profiles", profile))
            with suppress(LoadAwareSchedulingArgs.DoesNotExist):
                objects.append(("loadaware", profile.loadaware_args))
    objects += [("thresholds", p) for p in cluster.threshold_policies.order_by("-priority", "id")]
    objects += [
        ("collect", p) for p in cluster.collect_policies.order_by("-is_default", "-priority", "id")
    ]
    return [
        {
            "slug": slug,
            "obj": obj,
            "label": EDITORS[slug].label(obj),
            "status": jobs.of(obj),
        }
        for slug, obj in objects
    ]


@role_required(Role.VIEWER)
@require_GET
def sync_index(request: HttpRequest) -> HttpResponse:
    """The navigation's "Sync": the selected (else the demo, else the first) cluster's page."""
    cluster = selected_cluster(request, list(Cluster.objects.all()))
    if cluster is None:
        return render(request, "policy/sync/cluster.html", {"cluster": None})
    return redirect("cluster-sync", cluster.pk)


JOB_COLUMNS = (
    ("Job", "id", "id"),
    ("Kind", "kind", "kind"),
    ("Status", "status", "status"),
    ("Trigger", "trigger", "trigger"),
    ("Who", "who", "requested_by__username"),
    ("Requested (UTC)", "requested", "created"),
    ("Duration", "", ""),
    ("Error", "", ""),
)


@role_required(Role.VIEWER)
@require_GET
def cluster_sync(request: HttpRequest, pk: int) -> HttpResponse:
    """Where each policy stands, the drift the last refresh found, and the recent jobs."""
    cluster = get_object_or_404(Cluster, pk=pk)
    jobs = sync_status.for_cluster(cluster)
    kind = request.GET.get("kind", "")
    history = SyncJob.objects.filter(cluster=cluster).select_related("requested_by")
    if kind in SyncJobKind.values:
        history = history.filter(kind=kind)
    else:
        kind = ""
    order = sorting.ordering(request, JOB_COLUMNS, ("-created", "-id"))
    history = history.defer("changes", "log", "claimed_owned", "notes").order_by(*order)
    page = Paginator(history, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    drift = sync_services.drift_report(cluster)
    for item in drift["drift"]:
        item["lines"] = diff_lines(item.get("diff") or "")
    refresh_job, refresh_notes = sync_services.last_refresh_notes(cluster)
    context = {
        "cluster": cluster,
        "clusters": list(Cluster.objects.all()),
        "refresh_job": refresh_job,
        "refresh_notes": refresh_notes,
        "status": jobs.overall,
        "policies": _policy_rows(cluster, jobs),
        "drift": drift,
        "page_obj": page,
        "jobs": [(job, present.duration(job.duration)) for job in page.object_list],
        "kind": kind,
        "kinds": SyncJobKind.choices,
        "headings": sorting.headings(request, JOB_COLUMNS),
        "sorted": bool(request.GET.get("sort")),
        "can_push": can_push_policy(request.user),
        "can_refresh": can_edit_policy(request.user),
        "flavors": FLAVORS,
        "scheduler_target": cluster.scheduler_target(),
    }
    return render(request, "policy/sync/cluster.html", context)


@role_required(Role.VIEWER)
@require_POST
def cluster_sync_target(request: HttpRequest, pk: int) -> HttpResponse:
    """Set the scheduler the cluster runs (flavor, version; empty: detected), operators."""
    _require_operator(request)
    cluster = get_object_or_404(Cluster, pk=pk)
    values = {
        "scheduler_flavor": request.POST.get("scheduler_flavor", "").strip(),
        "scheduler_version": request.POST.get("scheduler_version", "").strip(),
    }
    try:
        policies.ClusterService().update(
            cluster.pk,
            values,
            ChangeContext.from_request(request, ui=True),
            expected_version=None,
        )
    except policies.PolicyInvalid as exc:
        messages.error(request, "; ".join(f"{e.field}: {e.detail}" for e in exc.errors))
    else:
        target = Cluster.objects.get(pk=pk).scheduler_target()
        messages.success(request, f"Scheduler target of {cluster.name}: {target or 'inferred'}.")
    return redirect("cluster-sync", cluster.pk)


def _changes(request: HttpRequest, changes: list[dict[str, Any]]) -> dict[str, Any]:
    """A plan's or job's changes for its page: identical changes grouped, the groups a page at
    a time (``?page=``); ``?group=N`` opens group N with all its objects, a page at a time
    (``?objects=``)."""
    groups = present.change_groups(changes)
    page = Paginator(groups, present.GROUPS_PER_PAGE).get_page(request.GET.get("page"))
    number = parse_id(request.GET.get("group"))
    opened = next((g for g in page.object_list if g.number == number), None)
    objects = None
    if opened is not None:
        paginator = Paginator(opened.objects, present.OBJECTS_PER_PAGE)
        objects = paginator.get_page(request.GET.get("objects"))
    return {
        "rows": list(page.object_list),
        "groups_page": page,
        "opened": opened,
        "opened_objects": objects,
        "summary": present.change_summary(changes),
    }


def _review(
    request: HttpRequest,
    cluster: Cluster,
    plan: SyncJob,
    *,
    stale: bool = False,
    status: int = 200,
    unacknowledged: bool = False,
) -> HttpResponse:
    """The confirmation page of the dry-run ``plan``."""
    context = {
        "cluster": cluster,
        "plan": plan,
        **_changes(request, plan.changes or []),
        "note_groups": present.note_groups(plan.notes or []),
        "attention": sync_services.attention_reasons(plan.changes or []),
        "unacknowledged": unacknowledged,
        "stale": stale,
        "failed": plan.status != SyncJobStatus.SUCCEEDED,
    }
    return render(request, "policy/sync/review.html", context, status=status)


@role_required(Role.VIEWER)
@require_POST
def cluster_sync_plan(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Push to cluster": the dry-run, then its confirmation page."""
    _require_operator(request)
    cluster = get_object_or_404(Cluster, pk=pk)
    plan = sync_services.plan(cluster, user=request.user)
    return redirect("cluster-sync-review", cluster.pk, plan.pk)


@role_required(Role.VIEWER)
@require_GET
def cluster_sync_review(request: HttpRequest, pk: int, job: int) -> HttpResponse:
    """A dry-run's changes, with "Confirm push" when there is something to push."""
    _require_operator(request)
    cluster = get_object_or_404(Cluster, pk=pk)
    plan = get_object_or_404(SyncJob, pk=job, cluster=cluster, kind=SyncJobKind.DRY_RUN)
    return _review(request, cluster, plan)


@role_required(Role.VIEWER)
@require_POST
def cluster_sync_push(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Confirm push": plan again; push only if the changes are the ones the operator read."""
    _require_operator(request)
    cluster = get_object_or_404(Cluster, pk=pk)
    plan_id = parse_id(request.POST.get("plan"))
    if plan_id is None:
        return HttpResponseBadRequest("plan: the id of the reviewed dry-run is required.")
    acknowledged = request.POST.get("acknowledge_attention") == "on"
    try:
        confirmed = sync_services.confirm_push(
            cluster, plan_id, user=request.user, acknowledged=acknowledged
        )
    except sync_services.UnknownPlan as exc:
        return HttpResponseBadRequest(f"plan: {exc}.")
    if confirmed.job is None:
        outcome = confirmed.outcome
        status = {"plan-failed": 502, "stale": 409, "unacknowledged": 400}.get(outcome, 200)
        return _review(
            request,
            cluster,
            confirmed.plan,
            stale=outcome == "stale",
            status=status,
            unacknowledged=outcome == "unacknowledged",
        )
    job = confirmed.job
    messages.success(request, f"Push #{job.pk} of {cluster.name} requested.")
    return redirect(_job_url(job))


@role_required(Role.VIEWER)
@require_POST
def cluster_sync_refresh(request: HttpRequest, pk: int) -> HttpResponse:
    """Read the cluster back into a new snapshot and check it for drift (editors too)."""
    if not can_edit_policy(request.user):
        raise _deny(request, "Refreshing a cluster needs the editor role.")
    cluster = get_object_or_404(Cluster, pk=pk)
    job = sync_services.refresh(cluster, user=request.user)
    messages.success(request, f"Refresh #{job.pk} of {cluster.name} requested.")
    return redirect(_job_url(job))


@role_required(Role.VIEWER)
@require_GET
def cluster_sync_job(request: HttpRequest, pk: int, job: int) -> HttpResponse:
    """One job: status, timings, error, every change with its diff, notes and log. While it
    is unfinished, ``X-Partial: status`` answers only its status (the script polls it)."""
    cluster = get_object_or_404(Cluster, pk=pk)
    jobs = SyncJob.objects.select_related("requested_by")
    found = get_object_or_404(jobs, pk=job, cluster=cluster)
    context = {
        "cluster": cluster,
        "job": found,
        "duration": present.duration(found.duration),
        "unfinished": found.status in (SyncJobStatus.QUEUED, SyncJobStatus.RUNNING),
        "poll_seconds": POLL_SECONDS,
    }
    if request.headers.get("X-Partial") == "status":
        return render(request, "policy/sync/_job_status.html", context)
    context |= {
        **_changes(request, found.changes or []),
        "note_groups": present.note_groups(found.notes or []),
        "can_push": can_push_policy(request.user),
    }
    return render(request, "policy/sync/job.html", context)
