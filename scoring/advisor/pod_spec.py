"""Changes to the pod's own constraints: tolerations, node selector and affinity, pod
(anti-)affinity and topology spread. Each is a merge patch of the manifest as evaluated."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from scoring.advisor.blockers import Blockers
from scoring.advisor.fix import Candidate
from scoring.objects import Node, Pod, Taint

TAINTS = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
POD_AFFINITY = "InterPodAffinity"
SPREAD = "PodTopologySpread"
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
TOLERATION_SETS = 3  # distinct sets of taints proposed, fewest first
SKEW_STEPS = (1, 2, 4)  # maxSkew raised by these, smallest first


def untolerated(pod: Pod, node: Node) -> tuple[Taint, ...]:
    """The node's NoSchedule/NoExecute taints no toleration of the pod tolerates."""
    return tuple(
        t
        for t in node.taints
        if t.effect in BLOCKING_EFFECTS and not any(o.tolerates(t) for o in pod.tolerations)
    )


def taint_groups(blockers: Blockers, extra: tuple[str, ...] = ()) -> Counter[tuple[Taint, ...]]:
    """Sets of untolerated taints on the nodes only taints (and ``extra`` filters) block, with
    how many nodes have each."""
    decision = blockers.decision
    pod, snapshot = decision.cycle.pod, decision.cycle.snapshot
    if not blockers.any(TAINTS):
        return Counter()
    nodes = np.flatnonzero(blockers.only((TAINTS, *extra)) & blockers.failing[TAINTS])
    return Counter(untolerated(pod, snapshot.nodes[int(i)]) for i in nodes)


def _spec(pod: Pod) -> Mapping[str, Any]:
    spec = pod.raw.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def toleration_candidates(blockers: Blockers) -> list[Candidate]:
    pod = blockers.decision.cycle.pod
    groups = taint_groups(blockers)
    ordered = sorted(groups.items(), key=lambda item: (len(item[0]), -item[1]))
    out = []
    for taints, _ in ordered[:TOLERATION_SETS]:
        if not taints:
            continue
        added = [_toleration(t) for t in taints]
        existing = copy.deepcopy(list(_spec(pod).get("tolerations") or []))
        words = ", ".join(_taint_text(t) for t in taints)
        out.append(
            Candidate(
                kind="add-toleration",
                target="pod",
                summary=f"Tolerate the taint{'s' if len(taints) > 1 else ''} {words}.",
                patch={"spec": {"tolerations": existing + added}},
                cost=(len(taints), 0.0),
            )
        )
    return out


def _toleration(taint: Taint) -> dict[str, str]:
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def _taint_text(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def node_selector_candidates(blockers: Blockers) -> list[Candidate]:
    """Drop one nodeSelector key, then all of them."""
    pod = blockers.decision.cycle.pod
    if not blockers.any(NODE_AFFINITY) or not pod.node_selector:
        return []
    out = []
    keys = sorted(pod.node_selector)
    for key in keys:
        out.append(
            Candidate(
                kind="relax-node-selector",
                target="pod",
                summary=f"Drop nodeSelector {key}={pod.node_selector[key]}.",
                patch={"spec": {"nodeSelector": {key: None}}},
                cost=(1, 0.0),
            )
        )
    if len(keys) > 1:
        out.append(
            Candidate(
                kind="relax-node-selector",
                target="pod",
                summary="Drop the nodeSelector.",
                patch={"spec": {"nodeSelector": None}},
                cost=(len(keys), 0.0),
            )
        )
    return out


def _required_node_terms(pod: Pod) -> list[Any] | None:
    node_affinity = pod.affinity.get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms")
    return list(terms) if isinstance(terms, list) and terms else None


def node_affinity_candidates(blockers: Blockers) -> list[Candidate]:
    """Drop one requirement of a required node affinity term, then the whole requirement."""
    pod = blockers.decision.cycle.pod
    terms = _required_node_terms(pod)
    if not blockers.any(NODE_AFFINITY) or terms is None:
        return []
    out = []
    total = 0
    for t, term in enumerate(terms):
        for field in ("matchExpressions", "matchFields"):
            items = list((term or {}).get(field) or [])
            total += len(items)
            for i, item in enumerate(items):
                changed = copy.deepcopy(terms)
                rest = items[:i] + items[i + 1 :]
                changed[t] = {**(term or {}), field: rest}
                if not rest:
                    changed[t].pop(field)
                changed = [c for c in changed if c.get("matchExpressions") or c.get("matchFields")]
                out.append(_node_affinity_candidate(changed, _requirement_text(item), 1))
    out.append(_node_affinity_candidate([], "every required node affinity term", max(total, 1)))
    return out


def _node_affinity_candidate(terms: list[Any], what: str, cost: int) -> Candidate:
    required: Any = {"nodeSelectorTerms": terms} if terms else None
    return Candidate(
        kind="relax-node-affinity",
        target="pod",
        summary=f"Drop {what} from the pod's required node affinity.",
        patch={
            "spec": {
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
                }
            }
        },
        cost=(cost, 0.0),
    )


def _requirement_text(item: Any) -> str:
    if not isinstance(item, Mapping):
        return "a requirement"
    values = item.get("values") or []
    shown = f" {','.join(str(v) for v in values)}" if values else ""
    return f"the requirement {item.get('key')} {item.get('operator')}{shown}"


def pod_affinity_candidates(blockers: Blockers) -> list[Candidate]:
    """Drop one required pod affinity or anti-affinity term."""
    pod = blockers.decision.cycle.pod
    if not blockers.any(POD_AFFINITY):
        return []
    out = []
    for kind in ("podAffinity", "podAntiAffinity"):
        block = pod.affinity.get(kind) or {}
        terms = list(block.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        for i, term in enumerate(terms):
            rest = terms[:i] + terms[i + 1 :]
            topology = (term or {}).get("topologyKey", "")
            label = "anti-affinity" if kind == "podAntiAffinity" else "affinity"
            out.append(
                Candidate(
                    kind="relax-pod-affinity",
                    target="pod",
                    summary=f"Drop the pod's required {label} term {i + 1} (topology {topology}).",
                    patch={
                        "spec": {
                            "affinity": {
                                kind: {
                                    "requiredDuringSchedulingIgnoredDuringExecution": rest or None
                                }
                            }
                        }
                    },
                    cost=(1, 0.0),
                )
            )
    return out


def spread_candidates(blockers: Blockers) -> list[Candidate]:
    """Raise one hard constraint's maxSkew a little, else let it be ScheduleAnyway."""
    pod = blockers.decision.cycle.pod
    if not blockers.any(SPREAD):
        return []
    constraints = [dict(c) for c in pod.topology_spread_constraints]
    out = []
    for i, constraint in enumerate(constraints):
        if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue
        skew = int(constraint.get("maxSkew") or 1)
        key = constraint.get("topologyKey", "")
        for step in SKEW_STEPS:
            changed = copy.deepcopy(constraints)
            changed[i]["maxSkew"] = skew + step
            out.append(
                _spread(changed, f"Raise maxSkew over {key} from {skew} to {skew + step}.", step)
            )
        changed = copy.deepcopy(constraints)
        changed[i]["whenUnsatisfiable"] = "ScheduleAnyway"
        out.append(_spread(changed, f"Let the spread over {key} be ScheduleAnyway.", 10))
    return out


def _spread(constraints: list[dict[str, Any]], summary: str, size: int) -> Candidate:
    return Candidate(
        kind="relax-topology-spread",
        target="pod",
        summary=summary,
        patch={"spec": {"topologySpreadConstraints": constraints}},
        cost=(1, size / 10),
    )
