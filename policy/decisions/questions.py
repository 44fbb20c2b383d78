"""The decisions domain's engine question, answered where the cluster's engine state is held.

``evaluate``: the engine's decision for a pod on a stored snapshot (the cluster's newest, or
one named), with the whole explanation encoded (compressed against the snapshot's
:class:`ExplanationBase`, made here by the first decision on it) and, when asked, the page of
nodes an API answer shows. The asking process records it (:func:`policy.decisions.services.record`).
"""

from __future__ import annotations

import base64
from typing import Any

from django.db import transaction

from policy.clusters.engine import document_digest, engine_for, evaluate_on
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import DecisionOutcome
from policy.decisions.evaluation import (
    ConfigurationChoice,
    EvaluationError,
    choose_configuration,
)
from policy.decisions.models import ExplanationBase
from policy.engine.questions import question
from scoring import (
    ConfigurationInvalid,
    Decision,
    DecisionBase,
    InputError,
    PackedDecision,
    encode_explanation,
    explanation_page,
    gc_paused,
    pack_decision,
    parse_pod,
)


@question("evaluate")
def evaluate(payload: dict[str, Any]) -> dict[str, Any]:
    cluster = Cluster.objects.filter(pk=payload["cluster"]).first()
    if cluster is None:
        raise EvaluationError("cluster", f"no cluster {payload['cluster']}")
    decision, stored, choice = decide(
        cluster, payload["pod"], payload.get("configuration"), payload.get("snapshot")
    )
    page = payload.get("page")
    return answer_for(
        decision,
        stored,
        choice,
        str(payload.get("actual_node") or ""),
        None if page is None else tuple(page),
    )


def decide(
    cluster: Cluster,
    manifest: dict[str, Any],
    configuration_id: int | None = None,
    snapshot_id: int | None = None,
) -> tuple[Decision, ClusterSnapshot, ConfigurationChoice]:
    """The engine's decision for ``manifest`` on snapshot ``snapshot_id`` (else the newest)
    with the cluster's configuration (checked against ``configuration_id``), where the engine
    state is held; :class:`EvaluationError` names the input at fault."""
    stored = _snapshot(cluster, snapshot_id)
    try:
        pod = parse_pod(manifest)
    except InputError as exc:
        raise EvaluationError("pod", str(exc)) from None
    choice = choose_configuration(cluster, configuration_id)
    try:
        engine = engine_for(choice.document, choice.target)
        return evaluate_on(stored, engine, pod), stored, choice
    except ConfigurationInvalid as exc:
        errors = [e.to_dict() for e in exc.errors]
        raise EvaluationError("configuration", "the configuration is invalid", errors) from None
    except InputError as exc:
        raise EvaluationError("pod", str(exc)) from None


def answer_for(
    decision: Decision,
    stored: ClusterSnapshot,
    choice: ConfigurationChoice,
    actual: str = "",
    page: tuple[int | None, int | None] | None = None,
) -> dict[str, Any]:
    """The ``evaluate`` answer for the engine's ``decision`` on ``stored``: what
    :func:`policy.decisions.services.record` stores, compared with ``actual`` (where the
    cluster's scheduler put the pod) when given, with the API's ``page`` of nodes when given."""
    observed = decision.compare(actual) if actual else None
    return {
        "snapshot": stored.pk,
        "taken_at": stored.taken_at.isoformat(),
        "configuration": {
            "id": choice.id,
            "version": choice.version,
            "digest": document_digest(choice.document),
        },
        "pod_key": {
            "namespace": decision.cycle.pod.namespace,
            "name": decision.cycle.pod.name,
            "uid": decision.cycle.pod.uid,
        },
        "profile": decision.profile,
        "selected_node": decision.selected_node or "",
        "outcome": _outcome(decision),
        "message": decision.summary() or "",
        "feasible_nodes": len(decision.feasible),
        "total_nodes": len(decision.cycle.snapshot),
        "actual_node": actual,
        "comparison": None
        if observed is None
        else {"agrees": observed.agrees, "rank": observed.rank, "gap": observed.gap},
        "explanation": _explanation(decision, stored),
        "page": None if page is None else _page(decision, *page),
    }


def _snapshot(cluster: Cluster, snapshot_id: int | None) -> ClusterSnapshot:
    if snapshot_id is None:
        latest = cluster.latest_snapshot()
        if latest is None:
            raise EvaluationError("cluster", f"cluster {cluster.name} has no snapshot yet")
        snapshot_id = latest.pk
    stored = ClusterSnapshot.snapshots.summaries().filter(pk=snapshot_id, cluster=cluster).first()
    if stored is None:
        raise EvaluationError("snapshot", f"cluster {cluster.name} has no snapshot {snapshot_id}")
    return stored


def _outcome(decision: Decision) -> str:
    if decision.error is not None:
        return DecisionOutcome.ERROR
    if decision.selected_node is None:
        return DecisionOutcome.UNSCHEDULABLE
    return DecisionOutcome.SCHEDULED


def _explanation(decision: Decision, stored: ClusterSnapshot) -> dict[str, Any]:
    """The whole explanation, encoded against the snapshot's base (docs/decisions.md), from
    the decision's columns (``pack_decision``: no per-node dicts)."""
    with gc_paused():  # a plugin without columns of its own still makes a dict per node
        packed = pack_decision(decision)
    base = _base(stored, packed)
    data = encode_explanation(packed, base.base())
    return {"data": base64.b64encode(data).decode(), "base": base.pk}


def _base(stored: ClusterSnapshot, packed: PackedDecision) -> ExplanationBase:
    """The base of decisions made on ``stored``: the first one's columns (docs/decisions.md).

    Locks in one order, the snapshot's row then its base's, everywhere a base is found or
    made: the snapshot's (``FOR NO KEY UPDATE``: it still admits the key-share locks that
    inserting rows referring to it takes) makes the first decisions on a snapshot make one
    base, not one each, when several processes answer (the embedded default's threads); the
    base's stays until the asking transaction ends, so retention cannot delete it meanwhile.
    An engine worker answers in autocommit and is the only one making the cluster's bases;
    retention leaves an unused base alone for an hour, so the decision naming it lands first.
    """
    with transaction.atomic():
        snapshot_row = ClusterSnapshot.snapshots.select_for_update(no_key=True).filter(pk=stored.pk)
        list(snapshot_row.values_list("pk", flat=True))
        bases = ExplanationBase.objects.select_for_update().filter(snapshot=stored)
        base = bases.order_by("id").first()
        if base is None:
            made = DecisionBase(packed.payload)
            base = ExplanationBase.objects.create(
                cluster=stored.cluster,
                snapshot=stored,
                data=made.to_bytes(),
                digest=made.digest.hex(),
            )
            base.keep(made)
    return base


def _page(decision: Decision, offset: int | None, limit: int | None) -> dict[str, Any]:
    """The nodes an API answer shows, and what it leaves out (as ``GET /decisions/{id}/``).
    Their explanations are many small dicts: with the collector running, one of its passes
    over the engine worker's old objects can land here and cost more than the page."""
    with gc_paused():
        cut = explanation_page(decision, offset, limit)
    selection = cut.selection
    return {
        "explanation": cut.explanation,
        "total": selection.total,
        "ranked": selection.ranked,
        "returned": len(selection.positions),
        "omitted": selection.omitted,
        "filtered_groups": [group.to_dict(cut.names) for group in selection.groups],
    }
