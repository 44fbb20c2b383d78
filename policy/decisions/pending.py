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

from policy.clusters.models import Cluster, ClusterSnapshot
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


def pending_pods(objects: list[dict[str, Any]], profiles: set[str]) -> list[dict[str, Any]]:
    pods = []
    for obj in objects:
        if obj.get("kind") != "Pod":
            continue
        spec = obj.get("spec") or {}
        phase = (obj.get("status") or {}).get("phase", "Pending")
        if phase != "Pending" or spec.get("nodeName"):
            continue
        if spec.get("schedulerName", DEFAULT_SCHEDULER) in profiles:
            pods.append(obj)
    return pods


def evaluate_pending_pods(cluster: Cluster) -> dict[str, int]:
    """Evaluate the newest snapshot's pending pods; returns counts."""
    latest = cluster.latest_snapshot()
    counts = {"pending": 0, "evaluated": 0, "unchanged": 0, "errors": 0}
    if latest is None:
        return counts
    stored = ClusterSnapshot.snapshots.get(pk=latest.pk)
    pods = pending_pods(stored.objects, managed_profiles(cluster))
    counts["pending"] = len(pods)
    messages = scheduling_failures(stored.objects)
    for pod in pods[:MAX_PODS]:
        outcome = _evaluate(cluster, pod, messages.get(_pod_key(pod), ""))
        counts[outcome] += 1
    return counts


def scheduling_failures(objects: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """Pod (namespace, name) -> the message of its newest FailedScheduling event."""
    newest: dict[tuple[str, str], tuple[str, str]] = {}
    for obj in objects:
        if obj.get("kind") != "Event" or obj.get("reason") != "FailedScheduling":
            continue
        involved = obj.get("involvedObject") or {}
        if involved.get("kind") != "Pod":
            continue
        key = (str(involved.get("namespace", "default")), str(involved.get("name", "")))
        when = str(obj.get("lastTimestamp") or obj.get("eventTime") or "")
        if key not in newest or when >= newest[key][0]:
            newest[key] = (when, str(obj.get("message", "")))
    return {key: message for key, (_, message) in newest.items()}


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
