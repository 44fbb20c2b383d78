"""What the cluster's scheduler did: for each pod bound since the previous snapshot, the
engine's decision on that snapshot (the cluster as it was before the binding) is recorded
with source ``cluster``, beside the node the scheduler chose, and whether they agree (the
scheduler's node is among the engine's top-scored ties) or, if not, that node's rank and
score gap. This answers "why did my pod land there?" with the real scheduler's choice.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from policy.clusters.engine import before_step
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import DecisionSource
from policy.decisions import evaluation, services
from policy.decisions.models import PlacementDecision
from policy.engine import client
from scoring import DEFAULT_SCHEDULER, Pod, Snapshot

logger = logging.getLogger(__name__)

MAX_BINDINGS = 200  # per refresh: a burst of bindings must not hold a worker for long

Obj = Mapping[str, Any]


@before_step
def _before_replacing(
    previous: ClusterSnapshot, current: ClusterSnapshot, held: Snapshot, pods: Iterable[Obj]
) -> None:
    """The bindings made between two snapshots are decided on the earlier one: recorded while
    the engine still holds it. Only where the engine tier holds the state: another process
    stepping its own copy (a what-if in the regular worker) leaves the bindings to the
    engine."""
    if client.in_process():
        counts = record_between(current.cluster, previous, held, pods)
        if counts["bound"]:
            logger.info("bindings between snapshots %s and %s: %s", previous.pk, current.pk, counts)


def record_between(
    cluster: Cluster, previous: ClusterSnapshot, held: Snapshot, pods: Iterable[Obj]
) -> dict[str, int]:
    """Record each of ``pods`` bound since ``previous`` (whose engine state is ``held``)."""
    counts = {"bound": 0, "recorded": 0, "known": 0, "errors": 0}
    bound_before = {_held_key(pod) for pods in (held.unbound, *held.pods_on_node) for pod in pods}
    bindings = new_bindings(bound_before, pods, services.managed_profiles(cluster))
    counts["bound"] = len(bindings)
    for pod in bindings[:MAX_BINDINGS]:
        counts[_record(cluster, previous, pod)] += 1
    return counts


def new_bindings(bound_before: set[str], after: Iterable[Obj], profiles: set[str]) -> list[Obj]:
    """Pods bound in ``after`` that were not bound (pending, or not there yet) before: their
    keys are not in ``bound_before``; and that one of ``profiles`` schedules."""
    found = []
    for obj in after:
        if not _is_pod(obj) or not _node(obj) or _key(obj) in bound_before:
            continue
        if (obj.get("spec") or {}).get("schedulerName", DEFAULT_SCHEDULER) in profiles:
            found.append(obj)
    return found


def _held_key(pod: Pod) -> str:
    """:func:`_key` of a pod of an engine snapshot."""
    return pod.uid or f"{pod.namespace}/{pod.name}"


def _record(cluster: Cluster, previous: ClusterSnapshot, pod: Obj) -> str:
    actual = _node(pod)
    unbound = copy.deepcopy(dict(pod))
    unbound["spec"].pop("nodeName", None)
    unbound["status"] = {"phase": "Pending"}
    digest = hashlib.sha256(f"{_key(pod)}@{actual}".encode()).hexdigest()
    if PlacementDecision.objects.filter(
        cluster=cluster, source=DecisionSource.CLUSTER, inputs_digest=digest
    ).exists():
        return "known"
    try:
        evaluated = evaluation.run(cluster, unbound, on=previous, actual_node=actual)
    except evaluation.EvaluationError as exc:
        logger.warning("binding of %s to %s: %s", _key(pod), actual, exc)
        return "errors"
    services.record(
        cluster,
        unbound,
        evaluated,
        digest=digest,
        source=DecisionSource.CLUSTER,
    )
    return "recorded"


def _is_pod(obj: Obj) -> bool:
    return obj.get("kind") == "Pod"


def _node(obj: Obj) -> str:
    return str((obj.get("spec") or {}).get("nodeName") or "")


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace', 'default')}/{meta.get('name', '')}")
