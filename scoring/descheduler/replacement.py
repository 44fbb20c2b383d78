"""Where the scheduler would place each pod a LowNodeLoad round evicts (a descheduling dry run).

In MigrationController's ReservationFirst mode (the default) the evicted pod's replacement is
first a Reservation that koord-scheduler places with the pod's template and the extra required
node affinity ``metadata.name NotIn [source]`` (controllers/migration/reservation/util.go); the
pod is evicted only once it is placed. Here each pod, in eviction order, is evaluated by the
engine as a pending copy of itself with that affinity added to every required term, on a copy of
the snapshot where the earlier replacements are reserved; the source pods stay where they are,
as they do until their Reservation is scheduled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from scoring.descheduler.lownodeload import Eviction
from scoring.engine import Engine
from scoring.errors import InputError
from scoring.objects import Pod
from scoring.snapshot import Snapshot

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


@dataclass
class Replacement:
    eviction: Eviction
    node: str | None  # None: unschedulable now (a ReservationFirst job aborts)
    feasible: int
    reasons: dict[str, int]  # why nodes were rejected, as the scheduler counts them
    error: str | None = None


def reservation_pod(pod: Pod, source: str) -> Pod:
    """The pod as its Reservation asks to be placed: unbound, without status, never on
    ``source``. (Made from the parsed pod: a snapshot does not keep bound pods' manifests.)"""
    affinity = dict(pod.affinity)
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    affinity["nodeAffinity"] = node_affinity
    required = node_affinity.get(_REQUIRED) or {}
    terms = list(required.get("nodeSelectorTerms") or [{}])
    exclude = {"key": "metadata.name", "operator": "NotIn", "values": [source]}
    new_terms = []
    for term in terms:
        term = dict(term or {})
        term["matchFields"] = [*(term.get("matchFields") or []), exclude]
        new_terms.append(term)
    node_affinity[_REQUIRED] = {**required, "nodeSelectorTerms": new_terms}
    return replace(
        pod,
        node_name="",
        affinity=affinity,
        phase="",
        status_qos_class="",
        status_conditions=None,
        source=None,
    )


def place_evicted(
    engine: Engine, snapshot: Snapshot, evictions: Sequence[Eviction], now: datetime | None = None
) -> list[Replacement]:
    """Evaluate every evicted pod's replacement, in order, reserving each placement."""
    work = snapshot.copy()
    out = []
    for eviction in evictions:
        try:
            pod = reservation_pod(eviction.pod, eviction.node)
            framework = engine.framework_for(pod)
        except InputError as exc:
            out.append(Replacement(eviction, None, 0, {}, str(exc)))
            continue
        decision = framework.evaluate(pod, work, now)
        node = decision.selected_node
        out.append(
            Replacement(
                eviction,
                node,
                len(decision.feasible),
                dict(decision.reason_counts()),
                decision.error,
            )
        )
        if node is not None:
            framework.reserve(decision)
    return out
