"""``NodeFit`` (pkg/descheduler/node/node.go): would a pod fit a target node at all.

Node selector and required node affinity, the ``NoSchedule``/``NoExecute`` taints it does not
tolerate, its requests against what the node's pods already request, and ``spec.unschedulable``.
"""

from __future__ import annotations

import numpy as np

from scoring.objects import Pod
from scoring.plugins.nodeaffinity import required_terms
from scoring.plugins.tainttoleration import tolerated
from scoring.selectors import SelectorError, terms_mask
from scoring.snapshot import BoolArray, Snapshot


def selector_mask(pod: Pod, snapshot: Snapshot) -> BoolArray:
    """``PodMatchNodeSelector`` over every node."""
    wanted = pod.node_selector.items()
    mask = np.array(
        [all(n.labels.get(k) == v for k, v in wanted) for n in snapshot.nodes], dtype=bool
    )
    try:
        terms = required_terms(pod)
    except SelectorError:
        return np.zeros(len(snapshot), dtype=bool)
    if terms is not None:
        mask &= terms_mask(snapshot, terms)
    return mask


def fit_reasons(pod: Pod, snapshot: Snapshot, node: int, selector_ok: bool) -> list[str]:
    """Every reason the pod does not fit ``node`` (empty when it fits)."""
    reasons = []
    if not selector_ok:
        reasons.append("pod node selector does not match the node label")
    taints = snapshot.nodes[node].taints
    if any(
        t.effect in ("NoSchedule", "NoExecute")
        and not tolerated(pod.tolerations, t, comparison_operators=False)
        for t in taints
    ):
        reasons.append("pod does not tolerate taints on the node")
    free = snapshot.allocatable[node] - snapshot.requested[node]
    for name, amount in (*pod.requests.items(), ("pods", 1)):
        column = snapshot.resource_index.get(name)
        available = 0 if column is None else int(free[column])
        if amount > available:
            reasons.append(f"insufficient {name}")
    if bool(snapshot.unschedulable[node]):
        reasons.append("node is not schedulable")
    return reasons
