"""How to place a pod a decision left unschedulable: the engine's verified fixes (a service).

Fixes are computed on the cluster's newest snapshot with its current scheduler configuration,
as the issue that asks for them requires ("what should I change now?"), for the decision's pod
manifest; the answer says which snapshot and configuration that was. A policy fix names the
LoadAware args object to edit when the configuration is stored in schedboard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from policy.clusters.engine import engine_for
from policy.core.choices import DecisionOutcome
from policy.decisions import evaluation
from policy.decisions.models import PlacementDecision
from policy.decisions.questions import decide
from policy.engine import client
from policy.engine.questions import Refused, question
from policy.policies.models import LoadAwareSchedulingArgs
from scoring import advise, gc_paused

DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True)
class Fixes:
    """The fixes and what they were computed on (None: nothing was evaluated)."""

    fixes: list[dict[str, Any]]
    snapshot_id: int | None = None
    configuration_id: int | None = None
    configuration_version: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "fixes": self.fixes,
            "snapshot": self.snapshot_id,
            "configuration": self.configuration_id,
            "configurationVersion": self.configuration_version,
        }


def fixes_for(row: PlacementDecision) -> Fixes:
    """The verified fixes for ``row``'s pod, smallest change first (none for a scheduled pod,
    or when the pod fits the newest snapshot as it is), from the engine tier. Raises
    :class:`evaluation.EvaluationError` when the cluster has no snapshot or the inputs do not
    evaluate."""
    if row.outcome == DecisionOutcome.SCHEDULED:
        return Fixes([])
    try:
        answer = client.ask(row.cluster_id, "fixes", {"decision": row.pk})
    except Refused as exc:
        raise evaluation.EvaluationError(exc.field, str(exc), exc.errors) from None
    return Fixes(
        answer["fixes"], answer["snapshot"], answer["configuration"], answer["configurationVersion"]
    )


@question("fixes")
def _fixes_question(payload: dict[str, Any]) -> dict[str, Any]:
    row = PlacementDecision.objects.select_related("cluster").filter(pk=payload["decision"]).first()
    if row is None:
        raise evaluation.EvaluationError("decision", f"no decision {payload['decision']}")
    return _fixes_here(row).to_dict()


def _fixes_here(row: PlacementDecision) -> Fixes:
    """:func:`fixes_for`, where the cluster's engine state is held."""
    decision, stored, choice = decide(row.cluster, row.pod)
    engine = engine_for(choice.document, choice.target)
    with gc_paused():
        found = [fix.to_dict() for fix in advise(engine, decision)]
    for fix in found:
        if fix["target"] == "policy":
            fix["patch"]["object"] = _loadaware_object(row, fix["patch"]["profile"])
    return Fixes(found, stored.pk, choice.id, choice.version)


def _loadaware_object(row: PlacementDecision, profile: str) -> dict[str, Any] | None:
    """The stored LoadAware args of ``profile`` in the cluster's configuration, to edit with
    ``PATCH /api/v1/loadaware-args/{id}/`` (None: defaults or args not stored here)."""
    names = Q(profile__scheduler_name=profile)
    if profile == DEFAULT_SCHEDULER:
        names |= Q(profile__scheduler_name="")
    args = (
        LoadAwareSchedulingArgs.objects.filter(names, profile__configuration__cluster=row.cluster)
        .only("pk", "version")
        .first()
    )
    if args is None:
        return None
    return {"type": "loadaware-args", "id": args.pk, "version": args.version}
