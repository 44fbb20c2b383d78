"""After a refresh: evaluate the pending pods schedboard's profiles schedule.

A pod is evaluated when it is Pending, not bound, and its ``schedulerName`` (default
``default-scheduler``) is a profile of the cluster's scheduler configuration; a decision is
recorded only when what is decided (profile, outcome, node, or why it is unschedulable) under
the configuration differs from the last decision recorded for that pod
(:func:`policy.decisions.evaluation.outcome_digest`), not at every refresh: a new snapshot
that changes nothing for the pod adds nothing to the history.
"""

from __future__ import annotations

import logging
from typing import Any

from policy.clusters.engine import snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.snapshots import scheduling_failures
from policy.core.choices import DecisionSource
from policy.decisions import evaluation
from policy.decisions.models import PlacementDecision
from policy.policies.models import SchedulerProfile

logger = logging.getLogger(__name__)

DEFAULT_SCHEDULER = "default-scheduler"
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
    evaluation.record(
        cluster,
        pod,
        evaluated,
        digest=digest,
        source=DecisionSource.WORKER,
        scheduler_message=scheduler_message,
    )
    return "evaluated"
