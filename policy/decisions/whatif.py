"""What-if comparisons (a service): check the inputs, queue the run, run it, cancel it.

A run places a workload on a copy of the cluster's newest snapshot under two scheduler
configurations (:func:`scoring.simulation.compare.what_if`) and keeps a report small enough
to store and draw: per side the counts, utilization and its distribution, the most common
reasons pods found no node, the pods left pending because a side has no profile for their
schedulerName (kube-scheduler ignores them); the pods the two sides placed differently (the first
:data:`MAX_LISTED`). Like evaluations, it runs with "now" set to the snapshot's time.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from policy.clusters.engine import engine_for, snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.snapshot_chains import materialize
from policy.core import broker, processes
from policy.core.choices import ConfigurationSource, DecisionSource, WhatIfStatus, WorkloadSource
from policy.decisions.models import PlacementDecision, WhatIfRun
from policy.policies import rendering
from policy.policies.documents import for_target
from policy.policies.models import SchedulerConfiguration
from policy.sync.appliers import as_pushed
from policy.sync.models import ClusterSyncState
from scoring import (
    Engine,
    InputError,
    Pod,
    SimulationRun,
    Snapshot,
    Target,
    TooManyPods,
    cluster_state,
    differences,
    expand_workload,
    flatten,
    parse_documents,
    parse_pod,
    reported_resources,
    run_summary,
    validate_configuration,
    what_if,
    workload_controllers,
)
from scoring import SchedulerConfiguration as EngineConfiguration

logger = logging.getLogger(__name__)

MAX_WORKLOAD_BYTES = 2 * 1024 * 1024
MAX_CONFIGURATION_BYTES = 256 * 1024  # a custom side's document as stored, aliases expanded
MAX_LISTED = 500  # pods placed differently / unschedulable kept per run
TOP_REASONS = 10
PROGRESS_INTERVAL = 0.5  # seconds between progress writes
STALLED_AFTER = 300  # seconds without a heartbeat before a running comparison is stalled


class WhatIfInvalid(ValueError):
    """The inputs cannot be compared; ``errors`` maps each input field to its messages."""

    def __init__(self, errors: Mapping[str, Sequence[str]]) -> None:
        self.errors = {field: list(messages) for field, messages in errors.items()}
        super().__init__("; ".join(f"{f}: {m}" for f, ms in self.errors.items() for m in ms))


class Cancelled(Exception):
    """The run was cancelled (or deleted) while it ran."""


@dataclass(frozen=True)
class ConfigurationInput:
    """One side of the comparison as asked for: a source, YAML for ``custom``, a label, and
    whether node annotations come from the stored node threshold policies (as a push would
    write them) rather than from the snapshot."""

    source: str
    text: str = ""
    label: str = ""
    thresholds: bool = False


@dataclass(frozen=True)
class ResolvedConfiguration:
    source: str
    label: str
    document: dict[str, Any] | None  # None: kube-scheduler's defaults
    thresholds: bool = False


def stored_configuration(cluster: Cluster) -> SchedulerConfiguration | None:
    return SchedulerConfiguration.objects.filter(cluster=cluster).first()


def resolve_configuration(
    cluster: Cluster, wanted: ConfigurationInput, field: str
) -> ResolvedConfiguration:
    """The document a side runs with; errors name ``field`` and the configuration field."""
    label = wanted.label.strip()[:120]
    if wanted.source == ConfigurationSource.DEFAULTS:
        label, document = label or "kube-scheduler defaults", None
    elif wanted.source == ConfigurationSource.STORED:
        stored = stored_configuration(cluster)
        if stored is None:
            raise WhatIfInvalid(
                {field: [f"cluster {cluster.name} has no stored scheduler configuration"]}
            )
        label, document = (
            label or f"stored configuration v{stored.version}",
            _for_target(stored.written_document(), cluster.scheduler_target(), field),
        )
    elif wanted.source == ConfigurationSource.CUSTOM:
        label, document = label or "custom YAML", _custom(wanted, field, cluster.scheduler_target())
    else:
        raise WhatIfInvalid({field: [f"unknown configuration source {wanted.source!r}"]})
    return ResolvedConfiguration(wanted.source, label, document, wanted.thresholds)


def _for_target(document: dict[str, Any], target: Target | None, field: str) -> dict[str, Any]:
    try:
        return for_target(document, target)
    except InputError as exc:
        raise WhatIfInvalid({field: [str(exc)]}) from None


def _custom(wanted: ConfigurationInput, field: str, target: Target | None) -> dict[str, Any]:
    if not wanted.text.strip():
        raise WhatIfInvalid({field: ["paste a KubeSchedulerConfiguration"]})
    try:
        documents = parse_documents(wanted.text, "YAML")
    except InputError as exc:
        raise WhatIfInvalid({field: [str(exc)]}) from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise WhatIfInvalid({field: ["expected one KubeSchedulerConfiguration object"]})
    _check_stored_size(documents[0], field)
    _checked(documents[0], target, field, "YAML")
    return documents[0]


def _check_stored_size(document: dict[str, Any], field: str) -> None:
    """The run stores the document as built: aliases within the loader's bound can still make
    it several times its text, so its stored size is bounded too (the loader's own bound keeps
    this measure cheap)."""
    size = len(json.dumps(document))
    if size > MAX_CONFIGURATION_BYTES:
        raise WhatIfInvalid(
            {
                field: [
                    f"{size // 1024:,} KiB once its aliases are expanded; a comparison stores "
                    f"at most {MAX_CONFIGURATION_BYTES // 1024} KiB per configuration"
                ]
            }
        )


def _checked(
    document: dict[str, Any], target: Target | None, field: str, source_name: str
) -> EngineConfiguration:
    """The engine's configuration of ``document`` as the target's scheduler would load it
    (defaults applied); its problems are ``field``'s."""
    try:
        loaded, errors = validate_configuration(document, source_name=source_name, target=target)
    except InputError as exc:
        raise WhatIfInvalid({field: [str(exc)]}) from None
    if loaded is None or errors:
        raise WhatIfInvalid({field: [f"{e.field}: {e.detail}" for e in errors]})
    return loaded


# -- presets: a candidate derived from the cluster's current configuration --------------------

PRESET_MOST_ALLOCATED = "most-allocated"
PRESET_REQUESTED_TO_CAPACITY = "requested-to-capacity"
PRESET_LOADAWARE = "loadaware-thresholds"
PRESETS = {
    PRESET_MOST_ALLOCATED: "NodeResourcesFit MostAllocated (packing)",
    PRESET_REQUESTED_TO_CAPACITY: "RequestedToCapacityRatio (shape 0% → 0, 100% → 10: packing)",
    PRESET_LOADAWARE: "LoadAware usage thresholds ± N percentage points",
}
PACKING_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
FIT = "NodeResourcesFit"
LOADAWARE = "LoadAwareScheduling"
GROUP_VERSION = "kubescheduler.config.k8s.io/v1"


@dataclass(frozen=True)
class Preset:
    """A configuration derived from the cluster's current one: what it is, from what."""

    label: str
    document: dict[str, Any]
    base: str  # "stored configuration v5" or "kube-scheduler defaults"
    description: str  # what changed, e.g. "LoadAware usage thresholds +10 percentage points"


def preset_configuration(cluster: Cluster, preset: str, points: int | None) -> Preset:
    """``preset`` applied to the cluster's stored configuration (kube-scheduler's defaults
    without one), in a version the cluster's scheduler reads, checked as a run would check it.
    ``points``: the LoadAware preset's change, in percentage points. Errors name ``preset`` or
    ``points``."""
    field = "preset"
    if preset not in PRESETS:
        raise WhatIfInvalid({field: ["choose a preset"]})
    target = cluster.scheduler_target()
    stored = stored_configuration(cluster)
    if stored is None:
        base_name = "kube-scheduler defaults"
        written: dict[str, Any] = {
            "apiVersion": GROUP_VERSION,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler"}],
        }
    else:
        base_name, written = f"stored configuration v{stored.version}", stored.written_document()
    document = copy.deepcopy(_for_target(written, target, field))
    if not document.get("profiles"):
        document["profiles"] = [{"schedulerName": "default-scheduler"}]
    if preset == PRESET_LOADAWARE:
        label = _loadaware_preset(document, points, target, field)
        description = f"LoadAware usage thresholds {points:+d} percentage points"
    else:
        label, description = _fit_preset(document, preset), PRESETS[preset]
    _checked(document, target, field, "preset")
    return Preset(label, document, base_name, description)


def _plugin_args(profile: dict[str, Any], name: str) -> dict[str, Any]:
    """The args of ``name`` in the profile's pluginConfig, added when missing."""
    entries = profile.setdefault("pluginConfig", [])
    for entry in entries:
        if entry.get("name") == name:
            args = entry.get("args")
            if not isinstance(args, dict):
                args = entry["args"] = {}
            return args
    entry = {"name": name, "args": {}}
    entries.append(entry)
    return entry["args"]


def _fit_preset(document: dict[str, Any], preset: str) -> str:
    """Every profile scores NodeResourcesFit by MostAllocated or a packing
    RequestedToCapacityRatio shape, keeping the resources and weights it scores."""
    for profile in document["profiles"]:
        args = _plugin_args(profile, FIT)
        strategy = args.get("scoringStrategy")
        resources = strategy.get("resources") if isinstance(strategy, dict) else None
        wanted: dict[str, Any]
        if preset == PRESET_MOST_ALLOCATED:
            wanted = {"type": "MostAllocated"}
        else:
            wanted = {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": copy.deepcopy(PACKING_SHAPE)},
            }
        if resources:
            wanted["resources"] = resources
        args["scoringStrategy"] = wanted
    return "MostAllocated" if preset == PRESET_MOST_ALLOCATED else "RequestedToCapacityRatio"


def _loadaware_preset(
    document: dict[str, Any], points: int | None, target: Target | None, field: str
) -> str:
    """LoadAwareScheduling's thresholds (usage, prod usage, aggregated usage) moved by
    ``points`` in every profile that enables it, from their current values (defaults
    included); a threshold of 0 (none) stays none, others stay within 1–100."""
    if not points:
        raise WhatIfInvalid({"points": ["give the change in percentage points, e.g. 10 or -10"]})
    current = _checked(document, target, field, "preset")
    changed = 0
    held: list[str] = []
    for profile, loaded in zip(document["profiles"], current.profiles, strict=True):
        if LOADAWARE not in loaded.enabled_plugins():
            continue
        defaulted = loaded.plugin_args.get(LOADAWARE, {})
        args = _plugin_args(profile, LOADAWARE)
        for key in ("usageThresholds", "prodUsageThresholds"):
            if defaulted.get(key):
                args[key] = _moved(defaulted[key], points, held, key)
        aggregated = defaulted.get("aggregated") or {}
        if aggregated.get("usageThresholds"):
            args["aggregated"] = {
                **(args.get("aggregated") or {}),
                "usageThresholds": _moved(
                    aggregated["usageThresholds"], points, held, "aggregated.usageThresholds"
                ),
            }
        changed += 1
    if not changed:
        raise WhatIfInvalid({field: [f"no profile of the configuration enables {LOADAWARE}"]})
    label = f"LoadAware thresholds {points:+d} points"
    if held:  # never clamped silently: the label says which values stopped at a bound
        label += f" (held within 1-100: {', '.join(dict.fromkeys(held))})"
    return label


def _moved(
    thresholds: Mapping[str, Any], points: int, held: list[str], field: str
) -> dict[str, int]:
    """Each threshold moved by ``points``, within 1-100 (a 0, no threshold, stays 0); each
    value that a bound stopped is added to ``held`` as "field.name a → b"."""
    out = {}
    for name, value in thresholds.items():
        if not value:
            out[name] = int(value)
            continue
        wanted = int(value) + points
        out[name] = min(100, max(1, wanted))
        if out[name] != wanted:
            held.append(f"{field}.{name} {int(value)} → {out[name]}, not {wanted}")
    return out


@dataclass(frozen=True)
class Workload:
    """What a what-if places: the pods (controllers expanded), the ReplicaSets and
    StatefulSets a cluster would hold for them (PodTopologySpread's default constraints read
    their selectors), and warnings about the manifests."""

    manifests: Sequence[Mapping[str, Any]]
    warnings: list[str]
    controllers: Sequence[Mapping[str, Any]]


def workload_manifests(source: str, text: str, snapshot: Snapshot | None) -> Workload:
    """The workload of a what-if; errors name ``workload`` (or ``workload_source``)."""
    if source == WorkloadSource.PENDING:
        if snapshot is None:
            raise WhatIfInvalid({"workload_source": ["the cluster has no snapshot yet"]})
        pods = [pod.raw for pod in snapshot.pending]
        if not pods:
            raise WhatIfInvalid({"workload_source": ["the snapshot has no pending pods"]})
        return Workload(pods, [], [])  # their controllers are in the snapshot already
    if len(text.encode()) > MAX_WORKLOAD_BYTES:
        raise WhatIfInvalid({"workload": [f"larger than {MAX_WORKLOAD_BYTES // 1024} KiB"]})
    if not text.strip():
        raise WhatIfInvalid({"workload": ["paste or upload the workload's manifests"]})
    warnings: list[str] = []
    limit = settings.WHATIF_MAX_PODS
    try:
        objects = list(flatten(parse_documents(text, "workload"), "workload"))
        manifests = expand_workload(objects, warn=warnings.append, limit=limit)
    except TooManyPods:
        raise WhatIfInvalid(
            {"workload": [f"more than {limit} pods: at most {limit} per comparison"]}
        ) from None
    except InputError as exc:
        raise WhatIfInvalid({"workload": [str(exc)]}) from None
    if not manifests:
        raise WhatIfInvalid(
            {"workload": ["no pods: give Pods, Deployments, ReplicaSets, StatefulSets or Jobs"]}
        )
    return Workload(manifests, warnings, workload_controllers(objects))


def _pods(manifests: Sequence[Mapping[str, Any]]) -> list[Pod]:
    limit = settings.WHATIF_MAX_PODS
    if len(manifests) > limit:
        raise WhatIfInvalid(
            {"workload": [f"{len(manifests)} pods; at most {limit} per comparison"]}
        )
    pods = []
    for k, manifest in enumerate(manifests):
        try:
            pods.append(parse_pod(manifest))
        except InputError as exc:
            raise WhatIfInvalid({"workload": [f"pod {k + 1}: {exc}"]}) from None
    return pods


def _engines(sides: Sequence[ResolvedConfiguration], target: Target | None) -> list[Engine]:
    """Engines for both sides, for the cluster's scheduler ``target``. A pod whose
    schedulerName a side has no profile for is not an error: kube-scheduler ignores such a pod
    and it stays pending, so the run counts it as pending on that side (:func:`_side`)."""
    return [engine_for(side.document, target) for side in sides]


def start(
    cluster: Cluster,
    *,
    workload_source: str,
    workload: str,
    baseline: ConfigurationInput,
    candidate: ConfigurationInput,
    user: AbstractBaseUser | AnonymousUser | None = None,
    replay_from: datetime | None = None,
    replay_until: datetime | None = None,
) -> WhatIfRun:
    """Check every input now (errors name fields), store the run, queue it on commit. A
    history replay (``workload_source`` history) starts from the snapshot before the first
    binding of the window ``replay_from`` ≤ t < ``replay_until``."""
    stored = cluster.latest_snapshot()
    if stored is None:
        raise WhatIfInvalid({"cluster": [f"cluster {cluster.name} has no snapshot yet"]})
    errors: dict[str, list[str]] = {}
    replayed: list[PlacementDecision] = []
    if workload_source == WorkloadSource.HISTORY:
        try:
            replayed = history_bindings(cluster, replay_from, replay_until)
        except WhatIfInvalid as exc:
            errors.update(exc.errors)
        if replayed and replayed[0].snapshot is not None:
            stored = replayed[0].snapshot
    sides: list[ResolvedConfiguration] = []
    for field, wanted in (("baseline", baseline), ("candidate", candidate)):
        try:
            sides.append(resolve_configuration(cluster, wanted, field))
        except WhatIfInvalid as exc:
            errors.update(exc.errors)
    pods: list[Pod] = []
    try:
        snapshot = snapshot_for(stored) if workload_source == WorkloadSource.PENDING else None
        if workload_source == WorkloadSource.HISTORY:
            pods = _pods([d.pod for d in replayed]) if replayed else []
        else:
            pods = _pods(workload_manifests(workload_source, workload, snapshot).manifests)
    except WhatIfInvalid as exc:
        errors.update(exc.errors)
    if errors:
        raise WhatIfInvalid(errors)
    _engines(sides, cluster.scheduler_target())
    run = WhatIfRun.objects.create(
        cluster=cluster,
        snapshot=stored,
        snapshot_taken_at=stored.taken_at,
        workload_source=workload_source,
        workload=workload if workload_source == WorkloadSource.MANIFESTS else "",
        replay_from=replay_from if workload_source == WorkloadSource.HISTORY else None,
        replay_until=replay_until if workload_source == WorkloadSource.HISTORY else None,
        pod_count=len(pods),
        baseline_source=sides[0].source,
        baseline_label=sides[0].label,
        baseline=sides[0].document,
        baseline_thresholds=sides[0].thresholds,
        candidate_source=sides[1].source,
        candidate_label=sides[1].label,
        candidate=sides[1].document,
        candidate_thresholds=sides[1].thresholds,
        progress_total=2 * len(pods),
        requested_by=user if isinstance(user, User) else None,
    )
    transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    """To the workers; without a broker (``WHATIF_OWN_PROCESS``), to a process of its own, so
    the request answers at once on the embedded default too."""
    if settings.WHATIF_OWN_PROCESS:
        try:
            processes.start_command("run_what_if", str(run_id))
        except OSError as exc:  # the change is saved: the run must say why it does not start
            logger.error("what-if %s: could not start its process: %s", run_id, exc)
            WhatIfRun.objects.filter(pk=run_id, status=WhatIfStatus.QUEUED).update(
                status=WhatIfStatus.FAILED,
                finished=timezone.now(),
                error=f"could not start the comparison's process: {exc}",
            )
        return
    broker.send(broker.RUN_WHAT_IF, (run_id,), f"What-if comparison {run_id}")


def cancel(run: WhatIfRun) -> bool:
    """Stop a queued or running comparison (the worker notices at its next progress write)."""
    return bool(
        WhatIfRun.objects.filter(
            pk=run.pk, status__in=[WhatIfStatus.QUEUED, WhatIfStatus.RUNNING]
        ).update(status=WhatIfStatus.CANCELLED, finished=timezone.now())
    )


def stalled(run: WhatIfRun) -> bool:
    """A running comparison whose worker stopped reporting (killed, or the machine went)."""
    if run.status != WhatIfStatus.RUNNING or run.heartbeat is None:
        return False
    return (timezone.now() - run.heartbeat).total_seconds() > STALLED_AFTER


class _Progress:
    """Writes progress at most every :data:`PROGRESS_INTERVAL`; raises :class:`Cancelled` when
    the row is no longer running."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.last = time.monotonic()

    def __call__(self, done: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_INTERVAL:
            return
        self.last = now
        alive = WhatIfRun.objects.filter(pk=self.run_id, status=WhatIfStatus.RUNNING).update(
            progress_done=done, heartbeat=timezone.now()
        )
        if not alive:
            raise Cancelled


def recover(now: datetime | None = None) -> dict[str, list[int]]:
    """Beat: a queued comparison no worker took (its message was lost) is sent again; a
    running one whose worker stopped reporting is marked failed, with the reason, so nobody
    waits on it (its inputs are kept: "Run again" starts it afresh)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=STALLED_AFTER)
    lost = list(
        WhatIfRun.objects.filter(status=WhatIfStatus.QUEUED, created__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    for run_id in lost:
        logger.warning("what-if %s was never taken by a worker; sending it again", run_id)
        try:
            _enqueue(run_id)
        except broker.BrokerUnavailable:
            break  # still down: the next run tries again
    stalled_ids = list(
        WhatIfRun.objects.filter(status=WhatIfStatus.RUNNING, heartbeat__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    WhatIfRun.objects.filter(pk__in=stalled_ids, status=WhatIfStatus.RUNNING).update(
        status=WhatIfStatus.FAILED,
        finished=now,
        error=f"the worker stopped reporting for over {STALLED_AFTER // 60} minutes "
        "(killed or restarted); run it again",
    )
    return {"resent": lost, "failed": stalled_ids}


def claim(run_id: int, worker: str) -> bool:
    """queued → running, once: a duplicate delivery of the task finds nothing to claim."""
    now = timezone.now()
    return bool(
        WhatIfRun.objects.filter(pk=run_id, status=WhatIfStatus.QUEUED).update(
            status=WhatIfStatus.RUNNING, started=now, heartbeat=now, worker=worker[:255]
        )
    )


def execute(run_id: int, worker: str = "") -> str | None:
    """Run comparison ``run_id`` if it is still queued; its final status (None: not claimed)."""
    if not claim(run_id, worker):
        return None
    run = WhatIfRun.objects.select_related("cluster").get(pk=run_id)
    progress = _Progress(run_id)
    try:
        result = _compare(run, progress)
    except Cancelled:
        logger.info("what-if %s was cancelled", run_id)
        return WhatIfStatus.CANCELLED
    except (WhatIfInvalid, InputError) as exc:
        return _finish(run_id, WhatIfStatus.FAILED, error=str(exc))
    except Exception as exc:  # the row must say it failed, whatever happened
        logger.exception("what-if %s failed", run_id)
        return _finish(run_id, WhatIfStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
    return _finish(run_id, WhatIfStatus.SUCCEEDED, result=result)


def _finish(
    run_id: int, status: str, *, error: str = "", result: dict[str, Any] | None = None
) -> str:
    """Store the outcome unless the run was cancelled meanwhile."""
    fields: dict[str, Any] = {"status": status, "finished": timezone.now(), "error": error}
    if result is not None:
        fields.update(result=result, progress_done=result["pods"] * 2)
    updated = WhatIfRun.objects.filter(pk=run_id, status=WhatIfStatus.RUNNING).update(**fields)
    return status if updated else WhatIfStatus.CANCELLED


def _compare(run: WhatIfRun, progress: _Progress) -> dict[str, Any]:
    stored = (
        ClusterSnapshot.snapshots.summaries().filter(pk=run.snapshot_id).first()
        if run.snapshot_id is not None
        else None
    )
    if stored is None:
        raise WhatIfInvalid({"snapshot": ["the starting snapshot was deleted; run it again"]})
    snapshot = snapshot_for(stored)
    replayed: list[PlacementDecision] = []
    if run.workload_source == WorkloadSource.HISTORY:
        replayed = history_bindings(run.cluster, run.replay_from, run.replay_until)
        workload = Workload([d.pod for d in replayed], [], [])
    else:
        workload = workload_manifests(run.workload_source, run.workload, snapshot)
    pods = _pods(workload.manifests)
    sides = [
        ResolvedConfiguration(
            run.baseline_source, run.baseline_label, run.baseline, run.baseline_thresholds
        ),
        ResolvedConfiguration(
            run.candidate_source, run.candidate_label, run.candidate, run.candidate_thresholds
        ),
    ]
    engines = _engines(sides, run.cluster.scheduler_target())
    now = run.snapshot_taken_at
    pushed = _as_pushed(run, stored) if any(side.thresholds for side in sides) else None
    starts = [pushed[0] if pushed and side.thresholds else snapshot for side in sides]
    if workload.controllers:  # on copies: the stored snapshot's engine form is shared
        starts = [_with_objects(start, workload.controllers) for start in starts]
    runs = what_if(
        snapshot,
        pods,
        now,
        [(side.label, engine) for side, engine in zip(sides, engines, strict=True)],
        progress=progress,
        starts=starts,
        unrouted_pending=True,
    )
    progress(2 * len(pods), force=True)
    result = report(starts[0], engines[0], pods, runs)
    for side, entry in zip(sides, result["runs"], strict=True):
        entry["thresholdsFromPolicies"] = side.thresholds
        entry["annotationsChanged"] = pushed[1] if pushed and side.thresholds else 0
    if replayed:
        result["replay"] = replay_report(replayed, runs)
    return result


def history_bindings(
    cluster: Cluster, start: datetime | None, end: datetime | None
) -> list[PlacementDecision]:
    """The bindings the cluster's scheduler made in ``start`` ≤ t < ``end`` (recorded decisions
    of source ``cluster``, each decided on the snapshot before it), in the order they were
    made; errors name ``replay_from`` / ``replay_until``."""
    if start is None or end is None:
        missing = [f for f, v in (("replay_from", start), ("replay_until", end)) if v is None]
        raise WhatIfInvalid({f: ["required to replay the cluster's history"] for f in missing})
    if start >= end:
        raise WhatIfInvalid({"replay_until": ["must be later than replay_from"]})
    limit = settings.WHATIF_MAX_PODS
    found = list(
        PlacementDecision.objects.filter(
            cluster=cluster,
            source=DecisionSource.CLUSTER,
            snapshot__isnull=False,
            snapshot_taken_at__gte=start,
            snapshot_taken_at__lt=end,
        )
        .select_related("snapshot")
        .defer("explanation_data")
        .order_by("snapshot_taken_at", "created", "id")[: limit + 1]
    )
    if not found:
        raise WhatIfInvalid(
            {"replay_from": ["the cluster's scheduler made no recorded binding in that window"]}
        )
    if len(found) > limit:
        raise WhatIfInvalid(
            {"replay_until": [f"more than {limit} bindings: at most {limit} per comparison"]}
        )
    return found


def replay_report(
    replayed: Sequence[PlacementDecision], runs: Sequence[SimulationRun]
) -> dict[str, Any]:
    """How many of the replayed pods each side places elsewhere than the cluster's scheduler
    did (a pod a side cannot place counts as elsewhere)."""
    actual = {f"{d.pod_namespace}/{d.pod_name}": d.actual_node for d in replayed}
    elsewhere = [sum(1 for p in run.placements if p.node != actual.get(p.pod.key)) for run in runs]
    return {
        "bindings": len(replayed),
        "from": replayed[0].snapshot_taken_at.isoformat(),
        "snapshot": replayed[0].snapshot_id,
        "elsewhere": elsewhere,
    }


def _with_objects(snapshot: Snapshot, objects: Sequence[Mapping[str, Any]]) -> Snapshot:
    copied = snapshot.copy()
    copied.add_cluster_objects(objects)
    return copied


def _as_pushed(run: WhatIfRun, stored: ClusterSnapshot) -> tuple[Snapshot, int]:
    """The starting snapshot with the node annotations a push of the stored node threshold
    policies would write (at the snapshot's time), and how many nodes that changes."""
    _, _, rows = rendering.render_node_thresholds(run.cluster, run.snapshot_taken_at, stored)
    state = ClusterSyncState.objects.filter(cluster=run.cluster).first()
    owned = set(state.owned_nodes) if state else set()
    changed, count = as_pushed(materialize(stored), {row.node: row.value for row in rows}, owned)
    return Snapshot.from_objects(changed, warn=lambda _: None), count


def report(
    before: Snapshot, engine: Engine, pods: Sequence[Pod], runs: Sequence[SimulationRun]
) -> dict[str, Any]:
    """What a comparison stores: both sides, the starting cluster, the pods that moved."""
    resources = reported_resources(before, pods)
    moved = differences(runs[0], runs[1])
    ignored = [{p.pod.key for p in run.placements if not p.routed} for run in runs]
    listed = [
        {**d.to_dict(), "pending": [d.pod in keys for keys in ignored]} for d in moved[:MAX_LISTED]
    ]
    return {
        "pods": len(pods),
        "resources": resources,
        "before": cluster_state(engine, before, runs[0].now, resources),
        "runs": [_side(run, resources) for run in runs],
        "differenceCount": len(moved),
        "differences": listed,
    }


def _side(run: SimulationRun, resources: Sequence[str]) -> dict[str, Any]:
    """One side: its summary, why pods found no node, and the pods left pending because the
    configuration has no profile for their schedulerName (kube-scheduler ignores them)."""
    failed = [p for p in run.placements if p.node is None and p.routed]
    reasons = Counter(p.reason or "" for p in failed)
    ignored = Counter(p.reason or "" for p in run.placements if not p.routed)
    return {
        **run_summary(run, resources),
        "pending": run.pending,
        "pendingReasons": [{"reason": r, "pods": n} for r, n in ignored.most_common()],
        "reasons": [{"reason": r, "pods": n} for r, n in reasons.most_common(TOP_REASONS)],
        "unschedulablePods": [{"pod": p.pod.key, "reason": p.reason} for p in failed[:MAX_LISTED]],
    }
