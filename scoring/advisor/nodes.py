"""Changes to nodes: label one, lift its taints, or free room on it by moving pods away.

Each is proposed for the one node that needs the smallest change (fewest labels, taints or
pods moved); ``patch`` maps that node's name to a merge patch of the Node. ``free-capacity``
changes no object: ``patch`` is empty and ``evict`` names the pods to move off the node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from scoring.advisor.blockers import Blockers
from scoring.advisor.fix import Candidate
from scoring.advisor.pod_spec import NODE_AFFINITY, TAINTS, untolerated
from scoring.advisor.requests import RESOURCE_FIT
from scoring.objects import Node, Pod
from scoring.quantity import format_amount

CORDON = "NodeUnschedulable"
# Labels the kubelet and cloud providers set: never proposed for a change by hand.
MANAGED_LABELS = ("kubernetes.io/", "k8s.io/")
TRIED = 3  # nodes tried per kind, smallest change first


def label_candidates(blockers: Blockers) -> list[Candidate]:
    """Give a node the labels the pod's node selector and first required term ask for."""
    decision = blockers.decision
    pod, snapshot = decision.cycle.pod, decision.cycle.snapshot
    if not blockers.any(NODE_AFFINITY):
        return []
    found = []
    for i in np.flatnonzero(blockers.only((NODE_AFFINITY,))):
        labels = needed_labels(pod, snapshot.nodes[int(i)])
        if labels and not any(_managed(key) for key in labels):
            found.append((len(labels), snapshot.node_names[int(i)], labels))
    out = []
    for size, name, labels in sorted(found, key=lambda f: (f[0], f[1]))[:TRIED]:
        words = ", ".join(k if v is None else f"{k}={v}" for k, v in labels.items())
        verb = "Label" if all(v is not None for v in labels.values()) else "Relabel"
        out.append(
            Candidate(
                kind="label-node",
                target="node",
                summary=f"{verb} node {name}: {words}.",
                patch={name: {"metadata": {"labels": labels}}},
                cost=(1, size / 10),
            )
        )
    return out


def _managed(key: str) -> bool:
    """``kubernetes.io/hostname``, ``topology.kubernetes.io/zone``, ``node.kubernetes.io/...``:
    the prefix's domain is (a subdomain of) kubernetes.io or k8s.io."""
    prefix = key.split("/", 1)[0] + "/" if "/" in key else ""
    return any(prefix == p or prefix.endswith("." + p) for p in MANAGED_LABELS)


def needed_labels(pod: Pod, node: Node) -> dict[str, str | None] | None:
    """Label changes that make ``node`` match (None: a requirement labels cannot meet)."""
    labels: dict[str, str | None] = {
        k: v for k, v in pod.node_selector.items() if node.labels.get(k) != v
    }
    required = (pod.affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    if terms:
        term = terms[0] or {}
        if term.get("matchFields"):
            return None
        try:
            for expression in term.get("matchExpressions") or []:
                labels.update(_expression_label(expression, node.labels))
        except _Unmet:
            return None
    return labels


class _Unmet(Exception):
    """A requirement no label change meets."""


def _expression_label(
    expression: Mapping[str, Any], have: Mapping[str, str]
) -> dict[str, str | None]:
    """The label change one requirement needs (empty when met); :class:`_Unmet` when labels
    cannot meet it."""
    key, operator = str(expression.get("key", "")), expression.get("operator")
    values = [str(v) for v in expression.get("values") or []]
    if operator == "In" and values:
        return {} if have.get(key) in values else {key: values[0]}
    if operator == "NotIn":
        return {key: None} if have.get(key) in values else {}
    if operator == "Exists":
        return {} if key in have else {key: "true"}
    if operator == "DoesNotExist":
        return {key: None} if key in have else {}
    raise _Unmet  # Gt / Lt: which number to write is not ours to pick


def untaint_candidates(blockers: Blockers) -> list[Candidate]:
    """Lift the taints the pod does not tolerate from one node (and uncordon it)."""
    decision = blockers.decision
    pod, snapshot = decision.cycle.pod, decision.cycle.snapshot
    if not (blockers.any(TAINTS) or blockers.any(CORDON)):
        return []
    found = []
    for i in np.flatnonzero(blockers.only((TAINTS, CORDON))):
        node = snapshot.nodes[int(i)]
        lifted = untolerated(pod, node)
        if lifted or node.unschedulable:
            found.append((len(lifted) + node.unschedulable, node.name, node, lifted))
    out = []
    for size, name, node, lifted in sorted(found, key=lambda f: (f[0], f[1]))[:TRIED]:
        kept = [t for t in (node.raw.get("spec") or {}).get("taints") or [] if _kept(t, lifted)]
        spec: dict[str, Any] = {"taints": kept or None}
        words = [f"remove taint {t.key}:{t.effect}" for t in lifted]
        if node.unschedulable:
            spec["unschedulable"] = None
            words.append("uncordon it")
        out.append(
            Candidate(
                kind="untaint-node",
                target="node",
                summary=f"On node {name}: {', '.join(words)}.",
                patch={name: {"spec": spec}},
                cost=(1, size / 10),
            )
        )
    return out


def _kept(raw: Any, lifted: tuple[Any, ...]) -> bool:
    if not isinstance(raw, Mapping):
        return True
    return not any(raw.get("key") == t.key and raw.get("effect") == t.effect for t in lifted)


def capacity_candidates(blockers: Blockers) -> list[Candidate]:
    """Move the fewest pods (lowest priority first) off one node that only lacks room."""
    decision = blockers.decision
    pod, snapshot = decision.cycle.pod, decision.cycle.snapshot
    if not blockers.any(RESOURCE_FIT) or _needs_pods(pod):
        return []
    found = []
    for i in np.flatnonzero(blockers.only((RESOURCE_FIT,))):
        plan = _evictions(pod, snapshot, int(i))
        if plan is not None:
            found.append((len(plan[0]), snapshot.node_names[int(i)], *plan))
    out = []
    for count, name, pods, freed in sorted(found, key=lambda f: (f[0], f[1]))[:TRIED]:
        words = ", ".join(format_amount(r, a) + f" {r}" for r, a in freed.items())
        out.append(
            Candidate(
                kind="free-capacity",
                target="node",
                summary=f"Free {words} on node {name} by moving {count} pod(s) elsewhere.",
                patch={},
                cost=(1 + count, 0.0),
                evict={name: [p.key for p in pods]},
            )
        )
    return out


def _evictions(pod: Pod, snapshot: Any, node: int) -> tuple[list[Pod], dict[str, int]] | None:
    """The pods to move so ``pod`` fits, lowest priority then largest first; None if even all
    movable pods would not make room."""
    need: dict[str, int] = {}
    for name, amount in pod.requests.items():
        column = snapshot.resource_index.get(name)
        if column is None or amount <= 0:
            continue
        short = amount - int(snapshot.allocatable[node, column] - snapshot.requested[node, column])
        if short > 0:
            need[name] = short
    column = snapshot.resource_index["pods"]
    pods_full = snapshot.requested[node, column] >= snapshot.allocatable[node, column]
    movable = [p for p in snapshot.pods_on_node[node] if _movable(p)]
    main = next(iter(need), "cpu")
    movable.sort(key=lambda p: (p.priority or 0, -p.requests.get(main, 0)))
    chosen: list[Pod] = []
    freed: dict[str, int] = dict.fromkeys(need, 0)
    for candidate in movable:
        if all(freed[r] >= need[r] for r in need) and (chosen or not pods_full):
            break
        chosen.append(candidate)
        for r in need:
            freed[r] += candidate.requests.get(r, 0)
    if not chosen or any(freed[r] < need[r] for r in need):
        return None
    return chosen, freed


def _needs_pods(pod: Pod) -> bool:
    """Whether the pod requires other pods near it: moving pods could break that, and the
    check of a move (``Snapshot.variant``) does not follow every pod-affinity state."""
    required = (pod.affinity.get("podAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return bool(required)


def _movable(pod: Pod) -> bool:
    """Not a DaemonSet's pod nor a static (mirror) pod: those come back where they were."""
    if any(o.get("kind") in ("DaemonSet", "Node") for o in pod.owner_references):
        return False
    return "kubernetes.io/config.mirror" not in pod.annotations
