"""Sync jobs: request (once), claim, run, retry, recover.

The job row is the source of truth; a Celery message only carries its id:

- requesting a push reuses a push that is still queued for the cluster (``enqueue_once``),
  under a row lock on the cluster, and the task is sent when the transaction commits;
- a worker claims the job with a conditional UPDATE (``queued``, or ``running`` with an
  expired lease: its worker died) and goes ahead only if it changed the row;
- a push then takes the cluster's lease (another conditional UPDATE, on ClusterSyncState):
  two workers never push the same cluster at once;
- before writing, the push records what it is about to own (``claimed_owned``); only when
  every write succeeded does one transaction mark the job succeeded and store what was
  written. A failed or killed push leaves the rest of the database as it was, and a retry
  re-plans from the cluster, so annotations that did land are found equal and not rewritten;
- transient API errors put the job back in the queue with exponential backoff (capped), up
  to ``MAX_ATTEMPTS``; permanent ones (403, 422...) fail it at once with the API's message;
- :func:`recover` (beat) re-sends jobs whose message was lost (broker restart) or whose
  worker died (expired lease).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from policy.accounts.changes import ChangeContext
from policy.clusters.gateway import apply as gw
from policy.clusters.gateway.changes import Change
from policy.clusters.gateway.errors import (
    ConflictError,
    GatewayError,
    ResourceVersionExpired,
    TransientError,
)
from policy.clusters.models import Cluster
from policy.clusters.services import record_snapshot
from policy.core import broker
from policy.core.choices import ClusterKind, PushMode
from policy.policies import descheduler, documents, rendering
from policy.policies import services as policies
from policy.policies.models import SchedulerConfiguration
from policy.policies.services import PolicyInvalid
from policy.sync import attention, planners
from policy.sync.appliers import PushFailed, PushPlan, as_dicts, target_for
from policy.sync.confirmation import confirmed_only, describe, unconfirmed
from policy.sync.models import ClusterSyncState, SyncJob, SyncJobKind, SyncJobStatus, SyncJobTrigger
from policy.sync.status import SYNCED, cluster_status
from scoring import target_from_image

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 6
# A running job's lease: its worker renews it every HEARTBEAT_SECONDS while it works, so one
# not renewed for LEASE_SECONDS (a killed worker, a lost machine) is taken to be interrupted
# and recovered within about a minute, however long a push of many nodes takes.
LEASE_SECONDS = 60.0
HEARTBEAT_SECONDS = 15.0
BACKOFF_BASE = 2.0
BACKOFF_CAP = 120.0
STALE_QUEUED_SECONDS = 120.0  # a queued job nobody claimed by then lost its message
BUSY_RETRY_SECONDS = 5.0

RETRYABLE = (TransientError, ConflictError, ResourceVersionExpired)


class RetryLater(Exception):
    """The job went back to the queue; send it again after ``countdown`` seconds."""

    def __init__(self, message: str, countdown: float) -> None:
        super().__init__(message)
        self.countdown = countdown


def backoff(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1``: exponential, capped, jittered to [d/2, d]."""
    delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** max(attempt - 1, 0))
    return delay / 2 + random.random() * delay / 2


# --------------------------------------------------------------------------------------------
# Requesting


def _user(user: AbstractBaseUser | AnonymousUser | None) -> User | None:
    return user if isinstance(user, User) else None


def _task(job: SyncJob) -> str:
    return broker.REFRESH_CLUSTER if job.kind == SyncJobKind.REFRESH else broker.PUSH_CLUSTER


def _send(job: SyncJob) -> None:
    broker.send(_task(job), (job.pk,), f"Sync job {job.pk} ({job.kind})")


def _send_or_leave_queued(job: SyncJob) -> None:
    """A job nobody asked for directly (a saved policy change in automatic push mode, the
    beat, a time window): a broker outage leaves it queued for the recovery to send."""
    broker.send_or_leave_queued(_task(job), (job.pk,), f"Sync job {job.pk} ({job.kind})")


def enqueue_once(
    cluster: Cluster,
    kind: str,
    *,
    trigger: str = SyncJobTrigger.OPERATOR,
    user: AbstractBaseUser | AnonymousUser | None = None,
    confirmed: Sequence[dict[str, Any]] | None = None,
) -> tuple[SyncJob, bool]:
    """A queued job of ``kind`` for ``cluster``: the one already waiting, or a new one sent to
    the workers when the transaction commits. Returns (job, created).

    A push of ``confirmed`` changes is never merged into a waiting push: it carries its own
    limit on what it may write.
    """
    with transaction.atomic():
        Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
        waiting = (
            SyncJob.objects.filter(
                cluster=cluster,
                kind=kind,
                status=SyncJobStatus.QUEUED,
                confirmed_changes__isnull=True,
            )
            .order_by("id")
            .first()
        )
        quiet = trigger != SyncJobTrigger.OPERATOR  # nobody is waiting to hear of an outage
        if waiting is not None and confirmed is None:
            if not quiet:
                # Sent again (claiming is conditional, so a second message is a no-op), so an
                # operator asking while the broker is down hears so, as on the first ask.
                transaction.on_commit(lambda: _send(waiting))
            return waiting, False
        job = SyncJob.objects.create(
            cluster=cluster,
            kind=kind,
            trigger=trigger,
            requested_by=_user(user),
            confirmed_changes=None if confirmed is None else confirmed_only(confirmed),
        )
        transaction.on_commit(lambda: _send_or_leave_queued(job) if quiet else _send(job))
        return job, True


def request_push(
    cluster: Cluster,
    *,
    trigger: str = SyncJobTrigger.OPERATOR,
    user: AbstractBaseUser | AnonymousUser | None = None,
    confirmed: Sequence[dict[str, Any]] | None = None,
) -> SyncJob:
    return enqueue_once(cluster, SyncJobKind.PUSH, trigger=trigger, user=user, confirmed=confirmed)[
        0
    ]


def request_refresh(
    cluster: Cluster,
    *,
    trigger: str = SyncJobTrigger.OPERATOR,
    user: AbstractBaseUser | AnonymousUser | None = None,
) -> SyncJob:
    return enqueue_once(cluster, SyncJobKind.REFRESH, trigger=trigger, user=user)[0]


# --------------------------------------------------------------------------------------------
# Claiming


@dataclass
class JobLog:
    """Lines for the job's log, written with the job's outcome."""

    job: SyncJob
    lines: list[str] = field(default_factory=list)

    def __call__(self, message: str, *args: Any) -> None:
        text = message % args if args else message
        stamp = timezone.now().strftime("%H:%M:%S")
        self.lines.append(f"{stamp} {text}")
        logger.info("sync job %s: %s", self.job.pk, text)

    def text(self) -> str:
        previous = self.job.log.rstrip("\n")
        new = "\n".join(self.lines)
        return f"{previous}\n{new}\n" if previous else f"{new}\n"


class _GatewayLines(logging.Handler):
    """What the gateway logs while this thread runs a job (a 409 re-read, a retried 500)
    goes into the job's own log too."""

    def __init__(self, log: JobLog) -> None:
        super().__init__(logging.INFO)
        self.log = log
        self.thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.log(record.getMessage())


@contextmanager
def _working(job: SyncJob, log: JobLog) -> Iterator[None]:
    """While a job runs: gateway messages go into its log, and a heartbeat renews its lease
    (and its cluster's push lock) every HEARTBEAT_SECONDS, from a thread of its own."""
    gateway = logging.getLogger("policy.clusters.gateway")
    lines = _GatewayLines(log)
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(job, stop), daemon=True, name="heartbeat")
    gateway.addHandler(lines)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        gateway.removeHandler(lines)
        beat.join(timeout=5)


def _heartbeat(job: SyncJob, stop: threading.Event) -> None:
    try:
        while not stop.wait(HEARTBEAT_SECONDS):
            renew(job)
    finally:
        connection.close()  # this thread's own database connection


def renew(job: SyncJob) -> bool:
    """Move the running job's lease (and its push lock) on; False if it is not running here
    any more (finished, or taken over after this worker was thought dead)."""
    until = timezone.now() + timedelta(seconds=LEASE_SECONDS)
    try:
        mine = SyncJob.objects.filter(pk=job.pk, status=SyncJobStatus.RUNNING, worker=job.worker)
        renewed = bool(mine.update(lease_expires=until))
        ClusterSyncState.objects.filter(cluster_id=job.cluster_id, locked_by=job).update(
            lock_expires=until
        )
    except DatabaseError:  # a busy or unreachable database: the next beat tries again
        logger.warning("sync job %s: could not renew its lease", job.pk, exc_info=True)
        return False
    return renewed


def claim(job_id: int, worker: str) -> SyncJob | None:
    """Take the job if it is queued, or running with an expired lease (its worker died)."""
    now = timezone.now()
    claimable = Q(status=SyncJobStatus.QUEUED) | Q(
        status=SyncJobStatus.RUNNING, lease_expires__lt=now
    )
    taken = (
        SyncJob.objects.filter(claimable, pk=job_id)
        .exclude(kind=SyncJobKind.DRY_RUN)
        .update(
            status=SyncJobStatus.RUNNING,
            worker=worker[:255],
            attempts=F("attempts") + 1,
            lease_expires=now + timedelta(seconds=LEASE_SECONDS),
        )
    )
    if not taken:
        return None
    job = SyncJob.objects.select_related("cluster").get(pk=job_id)
    if job.started is None:
        SyncJob.objects.filter(pk=job_id, started__isnull=True).update(started=now)
        job.started = now
    return job


def acquire_cluster(cluster: Cluster, job: SyncJob) -> bool:
    """The cluster's push lease: free, expired, or already this job's."""
    ClusterSyncState.objects.get_or_create(cluster=cluster)
    now = timezone.now()
    free = Q(locked_by__isnull=True) | Q(lock_expires__lt=now) | Q(locked_by=job)
    return bool(
        ClusterSyncState.objects.filter(free, cluster=cluster).update(
            locked_by=job, lock_expires=now + timedelta(seconds=LEASE_SECONDS)
        )
    )


def release_cluster(cluster: Cluster, job: SyncJob) -> None:
    ClusterSyncState.objects.filter(cluster=cluster, locked_by=job).update(
        locked_by=None, lock_expires=None
    )


def _requeue(job: SyncJob, log: JobLog, message: str, countdown: float) -> RetryLater:
    """Back to the queue (the next message, or :func:`recover`, picks it up again)."""
    log("%s; retrying in %.1f s", message, countdown)
    SyncJob.objects.filter(pk=job.pk, status=SyncJobStatus.RUNNING).update(
        status=SyncJobStatus.QUEUED,
        error=message,
        log=log.text(),
        worker="",
        lease_expires=timezone.now() + timedelta(seconds=countdown + STALE_QUEUED_SECONDS),
    )
    return RetryLater(message, countdown)


def _fail(job: SyncJob, log: JobLog, message: str, applied: list[dict[str, Any]]) -> None:
    log("failed: %s", message)
    SyncJob.objects.filter(pk=job.pk).update(
        status=SyncJobStatus.FAILED,
        finished=timezone.now(),
        error=message,
        changes=applied,
        log=log.text(),
        lease_expires=None,
    )


def _error_message(exc: GatewayError) -> str:
    status = f" (HTTP {exc.status})" if exc.status else ""
    return f"{type(exc).__name__}{status}: {exc.message}"


def _handle(
    job: SyncJob, log: JobLog, exc: Exception, applied: list[dict[str, Any]]
) -> RetryLater | None:
    """Transient: back to the queue (or failed once attempts ran out). Otherwise failed."""
    if applied:
        log("%d change(s) were written before the error", len(applied))
    if isinstance(exc, RETRYABLE):
        message = _error_message(exc)
        if job.attempts < MAX_ATTEMPTS:
            return _requeue(job, log, message, backoff(job.attempts))
        _fail(job, log, f"{message}; the job stopped after {job.attempts} attempts", applied)
        return None
    if isinstance(exc, GatewayError):
        _fail(job, log, _error_message(exc), applied)
    elif isinstance(exc, PolicyInvalid):
        _fail(job, log, f"the stored policies do not validate: {exc.errors}", applied)
    else:
        _fail(job, log, str(exc), applied)
    return None


# --------------------------------------------------------------------------------------------
# Running


def run_job(job_id: int, worker: str) -> SyncJob | None:
    """Run a push or refresh job. Returns the finished job, or None if it was not claimable
    (done, or held by a live worker). Raises :class:`RetryLater` when it went back to the
    queue."""
    job = claim(job_id, worker)
    if job is None:
        logger.info("sync job %s is not claimable (finished or held); skipping", job_id)
        return None
    log = JobLog(job)
    with _working(job, log):
        if job.kind == SyncJobKind.REFRESH:
            _refresh(job, log)
        else:
            _push(job, log)
    return SyncJob.objects.get(pk=job.pk)


def _push(job: SyncJob, log: JobLog) -> None:
    cluster = job.cluster
    log("attempt %d on %s", job.attempts, job.worker or "?")
    if not acquire_cluster(cluster, job):
        raise _requeue(job, log, "another push of this cluster is running", BUSY_RETRY_SECONDS)
    target = target_for(cluster)
    # Every write of this job, earlier attempts' included, recorded as it lands; the writes
    # planned and not yet heard back from are recorded ahead, marked in flight, so a worker
    # killed mid-push leaves the record of all it wrote or may have written.
    earlier = list(job.changes or [])
    applied = [change for change in earlier if not change.get(IN_FLIGHT)]
    in_flight: list[dict[str, Any]] = []

    def save() -> None:
        SyncJob.objects.filter(pk=job.pk).update(changes=applied + in_flight)

    def record_write(change: Change) -> None:
        landed = change.as_dict()
        key = _object_field(landed)
        in_flight[:] = [entry for entry in in_flight if _object_field(entry) != key]
        applied.append(landed)
        save()

    try:
        state = ClusterSyncState.objects.get(cluster=cluster)
        if cluster.kind != ClusterKind.DEMO and cluster.latest_snapshot() is None:
            log("no snapshot yet: reading the cluster first")
            _store_refresh(job, state, target, log)
        desired = planners.desired_state(cluster, state)
        owned = planners.owned(state)
        plan = target.plan(desired, owned)
        log("planned %d change(s)", len(plan.changes))
        if _beyond_confirmed(job, log, as_dicts(plan.changes)):
            return
        if _unreviewed_attention(job, log, plan):
            desired.scheduler_config = None  # the rest of the push goes on
        SyncJob.objects.filter(pk=job.pk).update(claimed_owned=plan.claim(owned, desired).as_dict())
        planned = as_dicts(plan.changes)
        applied += _landed_unheard(earlier, planned, log)
        in_flight[:] = [{**change, IN_FLIGHT: True} for change in planned]
        save()
        result = target.apply(desired, owned, plan, on_write=record_write)
    except PushFailed as exc:
        retry = _handle(job, log, exc.cause, applied)
    except (GatewayError, PolicyInvalid, rendering.NoSnapshot) as exc:
        retry = _handle(job, log, exc, applied)
    except Exception as exc:
        logger.exception("sync job %s failed unexpectedly", job.pk)
        _fail(job, log, f"internal error: {type(exc).__name__}: {exc}", applied)
        raise
    else:
        retry = None
        demo = cluster.kind == ClusterKind.DEMO
        _finish_push(job, log, desired, result, written=applied, wrote_slo=not demo)
    finally:
        target.close()
        release_cluster(cluster, job)
    if retry is not None:
        raise retry


IN_FLIGHT = "inFlight"  # a change planned and being written: it may or may not have landed
LANDED_UNHEARD = "landedUnheard"  # written by an attempt that stopped before hearing back


def _object_field(change: dict[str, Any]) -> tuple[Any, ...]:
    return (change.get("kind"), change.get("namespace"), change.get("name"), change.get("field"))


def _landed_unheard(
    earlier: list[dict[str, Any]], planned: list[dict[str, Any]], log: JobLog
) -> list[dict[str, Any]]:
    """The writes an earlier attempt had in flight when it stopped that this attempt finds
    done (nothing left to write there): they landed, unrecorded; recorded now. Those still
    planned are this attempt's to write and record."""
    again = {_object_field(change) for change in planned}
    landed = [
        {key: value for key, value in change.items() if key != IN_FLIGHT} | {LANDED_UNHEARD: True}
        for change in earlier
        if change.get(IN_FLIGHT) and _object_field(change) not in again
    ]
    for change in landed:
        log("%s %s: written before the last worker stopped", change["kind"], change["name"])
    return landed


def _beyond_confirmed(job: SyncJob, log: JobLog, planned: list[dict[str, Any]]) -> bool:
    """Fail the job, writing nothing, when it would make a change the operator did not
    confirm (the policies or the cluster changed since the plan was reviewed)."""
    if job.confirmed_changes is None:
        return False
    extra = unconfirmed(planned, job.confirmed_changes)
    if not extra:
        return False
    shown = "; ".join(describe(change) for change in extra[:3])
    more = f" and {len(extra) - 3} more" if len(extra) > 3 else ""
    _fail(
        job,
        log,
        f"not pushed: {len(extra)} change(s) were not in the confirmed plan ({shown}{more}); "
        "the policies or the cluster changed since it was reviewed: review the new plan",
        [],
    )
    return True


def _unreviewed_attention(job: SyncJob, log: JobLog, plan: PushPlan) -> bool:
    """Leave the scheduler ConfigMap alone in a push nobody reviewed (automatic, time window)
    when its change needs attention (:mod:`policy.sync.attention`): only an operator's
    acknowledged plan writes that. True when the change was taken out of ``plan``."""
    if job.trigger == SyncJobTrigger.OPERATOR or job.confirmed_changes is not None:
        return False
    marked = attention.mark(as_dicts(plan.config.changes), job.cluster)
    reasons = attention.needs_acknowledgement(marked)
    if not reasons:
        return False
    note = (
        f"scheduler configuration not written: its change needs attention ({'; '.join(reasons)}); "
        "an operator must review and acknowledge it (Push to cluster)"
    )
    plan.config = gw.Plan(notes=[note])
    log("note: %s", note)
    return True


def _finish_push(
    job: SyncJob,
    log: JobLog,
    desired: planners.Desired,
    result: Any,
    *,
    written: list[dict[str, Any]],
    wrote_slo: bool,
) -> None:
    log("applied %d change(s)", len(result.applied))
    for note in result.notes:
        log("note: %s", note)
    now = timezone.now()
    with transaction.atomic():
        state = ClusterSyncState.objects.select_for_update().get(cluster_id=job.cluster_id)
        if desired.scheduler_config is not None:
            state.scheduler_config = desired.scheduler_config
        state.annotations = {
            node: desired.annotations[node]
            for node in sorted(result.owned.nodes)
            if desired.annotations.get(node) is not None
        }
        state.owned_nodes = sorted(result.owned.nodes)
        state.owned_node_configs = sorted(result.owned.node_configs)
        state.owned_collect_fields = sorted(result.owned.collect_fields)
        if desired.manage_slo and wrote_slo:
            state.colocation_written = gw.written_colocation_fields(
                desired.collect_cluster, desired.node_configs, result.owned.node_configs
            )
        state.active_windows = desired.active_windows
        if desired.descheduler_config is not None:
            state.descheduler_config = desired.descheduler_config  # drift is checked against it
            if job.cluster.kind != ClusterKind.DEMO:
                descheduler.mark_pushed(job.cluster, desired.descheduler_config)
        state.last_push = job
        state.last_pushed_at = now
        state.save()
        SyncJob.objects.filter(pk=job.pk).update(
            status=SyncJobStatus.SUCCEEDED,
            finished=now,
            error="",
            changes=written,
            notes=list(result.notes),
            log=log.text(),
            lease_expires=None,
        )
        if job.cluster.kind == ClusterKind.DEMO and result.applied:
            _after_refresh(job.cluster_id)
        elif result.applied:  # drift, sync status and the dashboard then see what was written
            request_refresh(job.cluster, trigger=SyncJobTrigger.AFTER_PUSH)


def _store_refresh(job: SyncJob, state: ClusterSyncState, target: Any, log: JobLog) -> Any:
    objects, taken_at, result = target.refresh(state)
    latest = job.cluster.latest_snapshot()
    signature = result.signature
    if result.listed:
        log("listed %s", ", ".join(result.listed))
    if result.changes:
        log("watched %d change(s) since the previous read", result.changes)
    if signature and signature == state.objects_signature and latest is not None:
        result.snapshot = latest
        target.snapshot_stored(latest.pk)
        log("nothing changed since snapshot %s: no new snapshot stored", latest.pk)
        return result
    snapshot = record_snapshot(job.cluster, objects, taken_at, result.since_stored)
    result.snapshot = snapshot
    transaction.on_commit(lambda: target.snapshot_stored(snapshot.pk))
    ClusterSyncState.objects.filter(pk=state.pk).update(objects_signature=signature)
    changes = result.since_stored
    what = (
        "every object"
        if snapshot.keyframe_id is None
        else f"{len(changes)} change(s) since snapshot {changes.since}"
    )
    log("stored snapshot %s (%s): %s", snapshot.pk, what, snapshot.counts())
    if result.missing:
        log("kinds not served by the cluster: %s", ", ".join(result.missing))
    return result


def _refresh(job: SyncJob, log: JobLog) -> None:
    log("attempt %d on %s", job.attempts, job.worker or "?")
    state, _ = ClusterSyncState.objects.get_or_create(cluster=job.cluster)
    target = target_for(job.cluster)
    try:
        with transaction.atomic():
            result = _store_refresh(job, state, target, log)
            _detect_target(job.cluster, result.live_scheduler_config, log, result.scheduler_image)
            not_adopted = _adopt(job, state, result.live_scheduler_config, log)
            _adopt_load_stack(job.cluster, result, log)
            drift = [d.as_dict() for d in result.drift]
            if drift:
                log("drift: %d object field(s) differ from what schedboard wrote", len(drift))
            ClusterSyncState.objects.filter(pk=state.pk).update(
                drift=drift, drift_checked_at=timezone.now()
            )
            SyncJob.objects.filter(pk=job.pk).update(
                status=SyncJobStatus.SUCCEEDED,
                finished=timezone.now(),
                error="",
                snapshot=result.snapshot,
                notes=[
                    *([not_adopted] if not_adopted else []),
                    *([f"drift: {len(drift)}"] if drift else []),
                ],
                log=log.text(),
                lease_expires=None,
            )
            _after_refresh(job.cluster_id)
    except (GatewayError, rendering.NoSnapshot) as exc:
        retry = _handle(job, log, exc, [])
        if retry is not None:
            raise retry from None
    except Exception as exc:
        logger.exception("sync job %s failed unexpectedly", job.pk)
        _fail(job, log, f"internal error: {type(exc).__name__}: {exc}", [])
        raise
    finally:
        target.close()


def _detect_target(
    cluster: Cluster, text: str | None, log: JobLog, image: str | None = None
) -> None:
    """Record the scheduler the cluster runs: the build its Deployment's image names when it
    names one, else what the engine infers from the ConfigMap's document."""
    from_image = target_from_image(image) if image else None
    if from_image is not None:
        detected, source = str(from_image), f"the scheduler's image {image}"
    elif text:
        detected, source = documents.detect_target(text), "the ConfigMap"
    else:
        return
    if detected and detected != cluster.detected_scheduler_target:
        Cluster.objects.filter(pk=cluster.pk).update(detected_scheduler_target=detected)
        cluster.detected_scheduler_target = detected
        log("scheduler target detected from %s: %s", source, detected)


def _adopt(job: SyncJob, state: ClusterSyncState, text: str | None, log: JobLog) -> str | None:
    """The first refresh of a cluster whose scheduler ConfigMap holds a configuration, while
    schedboard stores none, adopts it as the stored one (kept as written), so a push writes
    back what the scheduler already runs; an invalid one is left alone. Returns why nothing
    was adopted (a note of the job, shown on the Sync page), None when that is not news."""
    cluster = job.cluster
    if SchedulerConfiguration.objects.filter(cluster=cluster).exists():
        return None
    ref = f"{cluster.scheduler_config_namespace}/{cluster.scheduler_config_name}"
    if not text:
        note = (
            f"no scheduler configuration at {ref}:{cluster.scheduler_config_key}: nothing "
            "adopted (is that the key the scheduler reads? the cluster's settings name it)"
        )
        log("%s", note)
        return note
    try:
        with transaction.atomic():
            configuration = policies.SchedulerConfigurationService().adopt(
                cluster, text, ChangeContext.system()
            )
    except policies.PolicyInvalid as exc:
        shown = "; ".join(f"{e.field or '<document>'}: {e.detail}" for e in exc.errors[:3])
        note = f"scheduler configuration in {ref} not adopted: {shown}"
        log("%s", note)
        return note
    except policies.PreconditionFailed:
        return None  # one was stored meanwhile
    ClusterSyncState.objects.filter(pk=state.pk).update(scheduler_config=text)
    log("adopted the scheduler configuration in %s (%s)", ref, configuration.api_version)
    return None


def _adopt_load_stack(cluster: Cluster, result: Any, log: JobLog) -> None:
    """koord-descheduler's configuration and koordlet's thresholds, stored as the refresh
    read them (a key that is gone leaves the last text stored)."""
    for note in result.load_stack_notes:
        log(note)
    now = timezone.now()
    descheduler_text = result.live_descheduler_config
    if descheduler_text is not None and descheduler.adopt_descheduler(
        cluster, descheduler_text, now
    ):
        log("read the descheduler configuration in %s", descheduler.descheduler_place(cluster))
        # Followed from now on: this refresh reports the hand edit as drift, the history keeps
        # it, and later refreshes compare with it. (An edit made here and not pushed yet is
        # not followed, so its drift stays until the push, whose plan shows it.)
        ClusterSyncState.objects.filter(cluster=cluster, descheduler_config__isnull=False).update(
            descheduler_config=descheduler_text
        )
    thresholds_text = result.live_resource_thresholds
    if thresholds_text is not None and descheduler.adopt_koordlet(cluster, thresholds_text, now):
        log("read koordlet's thresholds in %s", descheduler.koordlet_place(cluster))


def _after_refresh(cluster_id: int) -> None:
    broker.send_after_commit(
        broker.EVALUATE_PENDING,
        (cluster_id,),
        f"pending pods of cluster {cluster_id} not evaluated",
    )


# --------------------------------------------------------------------------------------------
# Dry-run


def plan_push(cluster: Cluster, *, user: AbstractBaseUser | AnonymousUser | None = None) -> SyncJob:
    """What a push would change now, object by object, recorded as a dry-run job (nothing
    is written; the job is finished when this returns)."""
    now = timezone.now()
    job = SyncJob.objects.create(
        cluster=cluster,
        kind=SyncJobKind.DRY_RUN,
        status=SyncJobStatus.RUNNING,
        requested_by=_user(user),
        started=now,
        attempts=1,
    )
    log = JobLog(job)
    state, _ = ClusterSyncState.objects.get_or_create(cluster=cluster)
    target = target_for(cluster)
    try:
        desired = planners.desired_state(cluster, state)
        plan = target.plan(desired, planners.owned(state))
    except (GatewayError, PolicyInvalid, rendering.NoSnapshot) as exc:
        message = _error_message(exc) if isinstance(exc, GatewayError) else str(exc)
        _fail(job, log, message, [])
    else:
        log("%d change(s) would be written", len(plan.changes))
        SyncJob.objects.filter(pk=job.pk).update(
            status=SyncJobStatus.SUCCEEDED,
            finished=timezone.now(),
            changes=attention.mark(as_dicts(plan.changes), cluster),
            notes=plan.notes,
            log=log.text(),
        )
    finally:
        target.close()
    return SyncJob.objects.get(pk=job.pk)


# --------------------------------------------------------------------------------------------
# Recovery and time windows


def recover(now: Any = None, send: Callable[[SyncJob], None] = _send) -> list[int]:
    """Re-send jobs whose message was lost or whose worker died; returns their ids."""
    now = now or timezone.now()
    stale_queued = Q(status=SyncJobStatus.QUEUED) & (
        Q(lease_expires__lt=now)
        | Q(lease_expires__isnull=True, created__lt=now - timedelta(seconds=STALE_QUEUED_SECONDS))
    )
    interrupted = Q(status=SyncJobStatus.RUNNING, lease_expires__lt=now)
    jobs = list(
        SyncJob.objects.filter(stale_queued | interrupted)
        .exclude(kind=SyncJobKind.DRY_RUN)
        .order_by("id")
    )
    for job in jobs:
        logger.warning(
            "sync job %s (%s) was lost or interrupted; sending it again", job.pk, job.status
        )
        if job.status == SyncJobStatus.QUEUED:
            # Move the deadline on, so the next recovery run does not send it twice.
            SyncJob.objects.filter(pk=job.pk, status=job.status).update(
                lease_expires=now + timedelta(seconds=STALE_QUEUED_SECONDS)
            )
        try:
            send(job)
        except broker.BrokerUnavailable:
            break  # still down: the next run tries again
    return [job.pk for job in jobs]


def apply_time_windows(at: Any = None) -> list[int]:
    """Push every cluster whose set of active time-windowed threshold policies differs from
    the one its last push wrote; returns the pushed clusters' ids.

    A window opening or closing is part of a policy already approved, so it is pushed even in
    manual mode, but only when nothing else is waiting for review there: a manual cluster with
    unpushed edits (or never pushed) stays as it is until an operator pushes it.
    """
    pushed = []
    clusters = Cluster.objects.filter(
        threshold_policies__enabled=True, threshold_policies__active_from__isnull=False
    ).distinct()
    for cluster in clusters:
        state, _ = ClusterSyncState.objects.get_or_create(cluster=cluster)
        active = planners.active_windows(cluster, at)
        if state.active_windows is not None and list(state.active_windows) == active:
            continue
        if cluster.push_mode == PushMode.MANUAL and cluster_status(cluster).state != SYNCED:
            logger.info("time windows of %s changed; not pushed: edits await an operator", cluster)
            continue
        request_push(cluster, trigger=SyncJobTrigger.TIME_WINDOW)
        pushed.append(cluster.pk)
    return pushed


def refresh_due(now: Any = None) -> list[int]:
    """Beat: queue a refresh of every connected cluster whose interval has passed since its
    last refresh (queued, running or done); returns their ids. Demo clusters drift on their own
    schedule; an interval of 0 means only when asked."""
    now = now or timezone.now()
    due = []
    clusters = Cluster.objects.exclude(kind=ClusterKind.DEMO).filter(refresh_interval_seconds__gt=0)
    for cluster in clusters:
        last = (
            SyncJob.objects.filter(cluster=cluster, kind=SyncJobKind.REFRESH)
            .order_by("-created")
            .values_list("created", flat=True)
            .first()
        )
        if last is not None and now - last < timedelta(seconds=cluster.refresh_interval_seconds):
            continue
        request_refresh(cluster, trigger=SyncJobTrigger.SCHEDULE)
        due.append(cluster.pk)
    return due
