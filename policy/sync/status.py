"""Whether a cluster's policies are on the cluster: synced, pending or failed.

Derived from rows that exist anyway: a policy's last change is its ``updated`` time (a
profile's or LoadAware args' change also bumps its configuration); a cluster's is the newest of
its policies', of its change log (a deletion leaves nothing else) and of its own settings'
changes (where and when it is pushed). The evidence is the sync jobs:

- **synced**: a successful push *started* after the change. A push reads the policies when it
  runs, so one that finished after the change may still have missed it; comparing with the
  start keeps a change saved during a push pending, the safe answer. A dry-run started after
  the change that found nothing to write is evidence too: the change did not alter what is
  written (the UI does not push an empty plan, so such a change would stay pending forever);
- **failed**: no such evidence, no push under way, and the newest push started after the
  change failed: its error and job are shown;
- **pending**: changed since the last successful push, or never pushed, with the push queued
  or running if there is one.

Per cluster this costs one query for the sync state, one bounded query for the jobs since the
last successful push, and one for the change times: never one per policy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import BooleanField, Case, OuterRef, Q, Subquery, Value, When

from policy.accounts.models import PolicyChange
from policy.clusters.models import Cluster
from policy.core.choices import ClusterKind
from policy.core.models import VersionedModel
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.sync.models import UNFINISHED, ClusterSyncState, SyncJob, SyncJobKind, SyncJobStatus

SYNCED = "synced"
PENDING = "pending"
FAILED = "failed"
# A demo cluster has no slo-controller: its collect policies are never written anywhere.
NOT_WRITTEN = "not-written"

# Pushes and dry-runs since the last successful push that are looked at, newest first: enough
# for any real sequence of failed attempts and plans; an older failure shows as pending.
RECENT_JOBS = 50

_JOB_FIELDS = ("id", "kind", "status", "created", "started", "finished", "error")


@dataclass(frozen=True)
class JobRef:
    """The few fields of a sync job the status needs (never its changes or log)."""

    id: int
    kind: str
    status: str
    created: datetime
    started: datetime | None
    finished: datetime | None
    error: str
    empty: bool = False  # finished without any change

    @property
    def begun(self) -> datetime:
        """When it read the policies (at the earliest): started, else requested."""
        return self.started or self.created

    @property
    def unfinished(self) -> bool:
        return self.status in UNFINISHED


@dataclass(frozen=True)
class SyncStatus:
    """One policy's (or a whole cluster's) sync status and the job that decides it.

    ``job`` is the evidence: the push or dry-run that synced it, or the push that failed
    (for pending, a push that failed since the change, if any); ``underway`` a push queued or
    running. ``last_push`` is the cluster's last successful push.
    """

    state: str
    cluster_id: int
    changed: datetime | None
    job: JobRef | None = None
    underway: JobRef | None = None
    last_push: JobRef | None = None

    @property
    def label(self) -> str:
        """The badge's text: the state in words (colour only repeats it)."""
        if self.state == NOT_WRITTEN:
            return "not written (demo)"
        if self.state == PENDING and self.underway is not None:
            return f"pending · push {self.underway.status}"
        return self.state

    @property
    def error_job(self) -> JobRef | None:
        """The job whose error to show: a push being retried, else the push that failed."""
        if self.underway is not None and self.underway.error:
            return self.underway
        if self.job is not None and self.job.status == SyncJobStatus.FAILED:
            return self.job
        return None

    @property
    def link_job(self) -> JobRef | None:
        """The job to look at: the push under way, the failure, or the evidence."""
        return self.underway or self.error_job or self.job

    @property
    def error(self) -> str:
        return self.error_job.error if self.error_job is not None else ""

    @property
    def summary(self) -> str:
        """One sentence saying why, for titles and the sync page."""
        if self.state == NOT_WRITTEN:
            return "A demo cluster has no slo-controller: collect policies are not written."
        if self.state == SYNCED:
            assert self.job is not None
            if self.job.kind == SyncJobKind.DRY_RUN:
                return f"Checked by dry-run #{self.job.id}: the cluster already has it."
            return f"Pushed by push #{self.job.id}."
        if self.state == FAILED:
            assert self.job is not None
            return f"Push #{self.job.id} failed: {self.job.error}"
        why = (
            "Changed since the last push"
            if self.last_push is not None
            else "Never pushed to the cluster"
        )
        if self.underway is not None:
            why += f"; push #{self.underway.id} is {self.underway.status}"
            if self.underway.error:
                why += f" (retrying after: {self.underway.error})"
        if self.job is not None:
            why += f"; push #{self.job.id} failed: {self.job.error}"
        return why + "."


@dataclass(frozen=True)
class ClusterJobs:
    """A cluster's sync evidence, loaded once: its last successful push and the pushes and
    dry-runs since (newest first, bounded); its last change is read when first asked for."""

    cluster: Cluster
    last_push: JobRef | None
    recent: tuple[JobRef, ...]

    @property
    def cluster_id(self) -> int:
        return self.cluster.pk

    @cached_property
    def last_change(self) -> datetime | None:
        return last_change(self.cluster)

    def status(self, changed: datetime | None) -> SyncStatus:
        """The status of something last changed at ``changed`` (None: never changed)."""

        def after(job: JobRef) -> bool:
            return changed is None or job.begun >= changed

        proofs = [
            job
            for job in (self.last_push, *self.recent)
            if job is not None
            and job.status == SyncJobStatus.SUCCEEDED
            and (job.kind == SyncJobKind.PUSH or job.empty)
            and after(job)
        ]

        def verdict(state: str, **evidence: JobRef | None) -> SyncStatus:
            return SyncStatus(state, self.cluster_id, changed, last_push=self.last_push, **evidence)

        if proofs:
            return verdict(SYNCED, job=max(proofs, key=lambda job: job.begun))
        pushes = [job for job in self.recent if job.kind == SyncJobKind.PUSH]
        underway = next((job for job in pushes if job.unfinished), None)
        failed = next(
            (job for job in pushes if job.status == SyncJobStatus.FAILED and after(job)), None
        )
        if underway is None and failed is not None:
            return verdict(FAILED, job=failed)
        return verdict(PENDING, job=failed, underway=underway)

    @property
    def overall(self) -> SyncStatus:
        """The whole cluster: every policy, and everything deleted."""
        return self.status(self.last_change)

    def of(self, obj: VersionedModel) -> SyncStatus:
        if isinstance(obj, NodeMetricCollectPolicy) and self.cluster.kind == ClusterKind.DEMO:
            return SyncStatus(NOT_WRITTEN, self.cluster.pk, obj.updated)
        return self.status(obj.updated)

    def annotate(self, objects: Iterable[VersionedModel | None]) -> None:
        """Set ``obj.sync_status`` on each object, for templates that list them."""
        for obj in objects:
            if obj is not None:
                obj.sync_status = self.of(obj)  # type: ignore[attr-defined]


def _ref(row: dict[str, Any], prefix: str = "") -> JobRef:
    return JobRef(
        **{name: row[f"{prefix}{name}"] for name in _JOB_FIELDS}, empty=row.get("empty", False)
    )


def _newest(queryset: Any, field: str) -> Subquery:
    return Subquery(queryset.order_by(f"-{field}").values(field)[:1])


def last_change(cluster: Cluster) -> datetime | None:
    """The newest change of any policy of ``cluster``, deletions and its settings included
    (one query)."""
    on = OuterRef("pk")
    cluster_type = ContentType.objects.get_for_model(Cluster)
    times = (
        Cluster.objects.filter(pk=cluster.pk)
        .annotate(
            logged=_newest(
                PolicyChange.objects.filter(
                    Q(cluster=on) | Q(content_type=cluster_type, object_id=on)
                ),
                "time",
            ),
            configuration=_newest(SchedulerConfiguration.objects.filter(cluster=on), "updated"),
            profile=_newest(SchedulerProfile.objects.filter(configuration__cluster=on), "updated"),
            args=_newest(
                LoadAwareSchedulingArgs.objects.filter(profile__configuration__cluster=on),
                "updated",
            ),
            threshold=_newest(NodeThresholdPolicy.objects.filter(cluster=on), "updated"),
            collect=_newest(NodeMetricCollectPolicy.objects.filter(cluster=on), "updated"),
        )
        .values("logged", "configuration", "profile", "args", "threshold", "collect")
        .first()
    )
    found = [value for value in (times or {}).values() if isinstance(value, datetime)]
    return max(found, default=None)


def for_cluster(cluster: Cluster) -> ClusterJobs:
    """Load a cluster's sync evidence (two queries, whatever the number of policies; a third
    for its last change when the cluster's own status is asked for)."""
    state = (
        ClusterSyncState.objects.filter(cluster=cluster, last_push__isnull=False)
        .values(*(f"last_push__{name}" for name in _JOB_FIELDS))
        .first()
    )
    last_push = _ref(state, "last_push__") if state else None
    jobs = SyncJob.objects.filter(cluster=cluster, kind__in=[SyncJobKind.PUSH, SyncJobKind.DRY_RUN])
    if last_push is not None:
        jobs = jobs.filter(id__gt=last_push.id)
    rows = (
        jobs.annotate(
            empty=Case(
                When(status=SyncJobStatus.SUCCEEDED, changes=[], then=Value(True)),
                default=Value(False),
                output_field=BooleanField(),
            )
        )
        .order_by("-id")
        .values(*_JOB_FIELDS, "empty")[:RECENT_JOBS]
    )
    return ClusterJobs(cluster, last_push, tuple(_ref(row) for row in rows))


def cluster_status(cluster: Cluster) -> SyncStatus:
    """The whole cluster's status (for the dashboard's header)."""
    return for_cluster(cluster).overall


def status_of(obj: VersionedModel, cluster: Cluster) -> SyncStatus:
    """One policy's status (its page); use :func:`for_cluster` for several."""
    return for_cluster(cluster).of(obj)
