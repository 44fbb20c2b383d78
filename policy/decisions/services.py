"""The decisions domain's use cases: evaluate a pod and record the decision; after a refresh,
evaluate the pending pods schedboard's profiles schedule.

The engine tier decides (``evaluate``, :mod:`policy.decisions.questions`); the asking process
records the decision with its whole explanation in one transaction, so a decision is whole when
it is answered. After a refresh a pod is evaluated when it is Pending, not bound, and its
``schedulerName`` (default ``default-scheduler``) is a profile of the cluster's scheduler
configuration; a decision is recorded only when what is decided (profile, outcome, node, or why
it is unschedulable) under the configuration differs from the last decision recorded for that
pod (:func:`policy.decisions.evaluation.outcome_digest`), not at every refresh: a new snapshot
that changes nothing for the pod adds nothing to the history.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction

from policy.clusters.engine import snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.snapshots import scheduling_failures
from policy.core.choices import Agreement, DecisionSource
from policy.decisions import evaluation
from policy.decisions.evaluation import Evaluated, inputs_digest, run
from policy.decisions.models import PlacementDecision
from policy.policies.models import SchedulerProfile
from scoring import DEFAULT_SCHEDULER


def evaluate_pod(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    *,
    configuration_id: int | None = None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    source: str = DecisionSource.API,
    token_name: str = "",
) -> PlacementDecision:
    """Evaluate ``manifest`` on the cluster's newest snapshot and record the decision."""
    return evaluate_and_record(
        cluster,
        manifest,
        configuration_id=configuration_id,
        user=user,
        source=source,
        token_name=token_name,
    )[0]


def evaluate_and_record(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    *,
    configuration_id: int | None = None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    source: str = DecisionSource.API,
    token_name: str = "",
    page: tuple[int | None, int | None] | None = None,
) -> tuple[PlacementDecision, Evaluated]:
    """:func:`evaluate_pod`; the record and the engine's answer (with the page of nodes
    ``page`` when given, to answer from without decoding the explanation)."""
    evaluated = run(cluster, manifest, configuration_id, page=page)
    digest = inputs_digest(manifest, evaluated.snapshot, evaluated.configuration["digest"])
    row = record(
        cluster,
        manifest,
        evaluated,
        digest=digest,
        user=user,
        source=source,
        token_name=token_name,
    )
    return row, evaluated


def record(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    evaluated: Evaluated,
    *,
    digest: str,
    user: AbstractBaseUser | AnonymousUser | None = None,
    source: str = DecisionSource.API,
    token_name: str = "",
    scheduler_message: str = "",
) -> PlacementDecision:
    """Store what :func:`run` decided, with its whole explanation; ``digest`` identifies it for
    deduplication. A decision compared with where the cluster's scheduler put the pod (the
    ``cluster`` source) carries the comparison."""
    observed = evaluated.comparison
    agreement = ""
    if observed is not None:
        agreement = Agreement.AGREES if observed["agrees"] else Agreement.DISAGREES
    pod = evaluated.pod_key
    explanation = evaluated.answer["explanation"]
    row = PlacementDecision(
        cluster=cluster,
        snapshot_id=evaluated.snapshot,
        snapshot_taken_at=datetime.fromisoformat(evaluated.taken_at),
        pod_namespace=pod["namespace"],
        pod_name=pod["name"],
        pod_uid=pod["uid"],
        pod=dict(manifest),
        profile=evaluated.profile,
        configuration_id=evaluated.configuration["id"],
        configuration_version=evaluated.configuration["version"],
        configuration_digest=evaluated.configuration["digest"],
        selected_node=evaluated.selected_node,
        outcome=evaluated.outcome,
        message=evaluated.message,
        feasible_nodes=evaluated.feasible_nodes,
        total_nodes=evaluated.total_nodes,
        explanation_data=evaluated.explanation_data,
        explanation_base_id=explanation["base"],
        requested_by=user if isinstance(user, User) else None,
        source=source,
        token_name=token_name,
        inputs_digest=digest,
        actual_node=evaluated.actual_node,
        scheduler_message=scheduler_message,
        agreement=agreement,
        actual_rank=observed["rank"] if observed else None,
        score_gap=observed["gap"] if observed else None,
    )
    with transaction.atomic():
        row.save()
    return row


def after_refresh(cluster_id: int) -> dict[str, int] | None:
    """Record a decision for each pending pod whose decision changed; None when the cluster is
    gone. Bringing the engine state to the newest snapshot records the bindings made since
    the one it held (``policy.decisions.observed``)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    return evaluate_pending_pods(cluster)


logger = logging.getLogger(__name__)

MAX_PODS = 500  # per run: a flood of pending pods must not hold a worker for long


def managed_profiles(cluster: Cluster) -> set[str]:
    names = set(
        SchedulerProfile.objects.filter(configuration__cluster=cluster).values_list(
            "scheduler_name", flat=True
        )
    )
    return names or {DEFAULT_SCHEDULER}


def evaluate_pending_pods(cluster: Cluster) -> dict[str, int]:
    """Evaluate the newest snapshot's pending pods; returns counts. Where the engine state is
    held: its pending pods are the held snapshot's, not every stored object read again."""
    latest = cluster.latest_snapshot()
    counts = {"pending": 0, "evaluated": 0, "unchanged": 0, "errors": 0}
    if latest is None:
        return counts
    profiles = managed_profiles(cluster)
    pods = [
        dict(pod.raw)
        for pod in snapshot_for(latest).pending
        if pod.phase in ("Pending", "") and pod.scheduler_name in profiles
    ]
    counts["pending"] = len(pods)
    messages = _failures(latest)
    for pod in pods[:MAX_PODS]:
        outcome = _evaluate(cluster, pod, messages.get("/".join(_pod_key(pod)), ""))
        counts[outcome] += 1
    return counts


def _failures(stored: ClusterSnapshot) -> dict[str, str]:
    """The FailedScheduling messages kept with ``stored`` (read from its objects for a
    snapshot stored before they were kept)."""
    rows = ClusterSnapshot.snapshots.filter(pk=stored.pk)
    kept = rows.values_list("scheduling_failures", flat=True).first()
    if kept is not None:
        return dict(kept)
    return scheduling_failures(rows.get().objects)


def _pod_key(pod: dict[str, Any]) -> tuple[str, str]:
    metadata = pod.get("metadata") or {}
    return str(metadata.get("namespace", "default")), str(metadata.get("name", ""))


def _evaluate(cluster: Cluster, pod: dict[str, Any], scheduler_message: str = "") -> str:
    """``evaluated``, ``unchanged`` (same decision as last recorded) or ``errors``."""
    metadata = pod.get("metadata") or {}
    last = (
        PlacementDecision.objects.filter(
            cluster=cluster,
            source=DecisionSource.WORKER,
            pod_namespace=metadata.get("namespace", "default"),
            pod_name=metadata.get("name", ""),
        )
        .order_by("-created", "-id")
        .values_list("inputs_digest", flat=True)
        .first()
    )
    try:
        evaluated = evaluation.run(cluster, pod)
    except evaluation.EvaluationError as exc:
        logger.warning(
            "pending pod %s/%s: %s", metadata.get("namespace"), metadata.get("name"), exc
        )
        return "errors"
    config_digest = evaluated.configuration["digest"]
    digest = evaluation.outcome_digest(pod, config_digest, evaluated)
    if scheduler_message:  # what the scheduler says is part of what is recorded
        digest = evaluation.outcome_digest(pod, digest + scheduler_message, evaluated)
    if digest == last:
        return "unchanged"
    record(
        cluster,
        pod,
        evaluated,
        digest=digest,
        source=DecisionSource.WORKER,
        scheduler_message=scheduler_message,
    )
    return "evaluated"
