"""``lower-request``: the highest requests that fit the node with the most room for them."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from scoring.advisor.blockers import Blockers
from scoring.advisor.fix import Candidate
from scoring.objects import Pod
from scoring.quantity import format_amount, scheduler_amount

RESOURCE_FIT = "NodeResourcesFit"
# Filters that lowering a request (and its limit in step) can satisfy too: LimitAware follows
# the limits, LoadAware the estimate (from the request). Nodes LoadAware passes already are
# tried first: a lower request only lowers the estimate, so they keep passing it.
REQUEST_DEPENDENT = (RESOURCE_FIT, "LimitAware")
ESTIMATE_DEPENDENT = (*REQUEST_DEPENDENT, "LoadAwareScheduling")
TRIED = 3  # distinct request levels proposed, from the smallest change


def candidates(blockers: Blockers) -> list[Candidate]:
    """One candidate per distinct level, from the nodes only requests keep the pod off."""
    decision = blockers.decision
    if not blockers.any(RESOURCE_FIT):
        return []
    snapshot, pod = decision.cycle.snapshot, decision.cycle.pod
    nodes = np.flatnonzero(blockers.only(REQUEST_DEPENDENT) & blockers.failing[RESOURCE_FIT])
    if len(nodes) == 0:
        nodes = np.flatnonzero(blockers.only(ESTIMATE_DEPENDENT) & blockers.failing[RESOURCE_FIT])
    if len(nodes) == 0:
        return []
    names = [n for n, amount in pod.requests.items() if amount > 0 and n in snapshot.resource_index]
    columns = [snapshot.resource_index[n] for n in names]
    want = np.array([pod.requests[n] for n in names], dtype=np.int64)
    free = snapshot.allocatable[nodes][:, columns] - snapshot.requested[nodes][:, columns]
    pods_column = snapshot.resource_index["pods"]
    room = snapshot.requested[nodes, pods_column] < snapshot.allocatable[nodes, pods_column]
    usable = room & (free > 0).all(axis=1)
    lowered = np.minimum(want, np.maximum(free, 0))
    cut = ((want - lowered) / want).max(axis=1)
    levels: dict[tuple[int, ...], float] = {}
    for k in np.argsort(cut, kind="stable"):
        if usable[k] and cut[k] > 0:
            levels.setdefault(tuple(int(v) for v in lowered[k]), float(cut[k]))
        if len(levels) >= TRIED:
            break
    return [_candidate(pod, dict(zip(names, level, strict=True)), c) for level, c in levels.items()]


def _candidate(pod: Pod, target: dict[str, int], cut: float) -> Candidate:
    changed = {n: v for n, v in target.items() if v < pod.requests[n]}
    containers = lowered_containers(pod, changed)
    words = ", ".join(
        f"{n} from {format_amount(n, pod.requests[n])} to {format_amount(n, v)}"
        for n, v in changed.items()
    )
    return Candidate(
        kind="lower-request",
        target="pod",
        summary=f"Lower the pod's requests (limits in step): {words}.",
        patch={"spec": {"containers": containers}},
        cost=(len(changed), cut),
    )


def lowered_containers(pod: Pod, target: dict[str, int]) -> list[Any]:
    """``spec.containers`` with each resource's requests cut, the largest first, until the
    containers' sum is ``target`` lower by what the pod asks above it (a merge patch replaces
    the array whole, so every container is written)."""
    raw = copy.deepcopy(list((pod.raw.get("spec") or {}).get("containers") or []))
    for name, amount in target.items():
        excess = pod.requests[name] - amount
        owned = [
            (scheduler_amount(name, c.requests.get(name, 0)), i)
            for i, c in enumerate(pod.containers)
        ]
        for have, i in sorted(owned, reverse=True):
            if excess <= 0 or have <= 0:
                break
            cut = min(have, excess)
            resources = raw[i].setdefault("resources", {})
            resources.setdefault("requests", {})[name] = _rounded(name, have - cut)
            limit = scheduler_amount(name, pod.containers[i].limits.get(name, 0))
            if limit > 0:  # the limit keeps its ratio to the request (and stays above it)
                scaled = max(have - cut, limit * (have - cut) // have)
                resources.setdefault("limits", {})[name] = _rounded(name, scaled, up=True)
            excess -= cut
    return raw


def _rounded(name: str, amount: int, *, up: bool = False) -> str:
    """The amount as a quantity, memory rounded to whole MiB when it is that large (down for
    a request, so it still fits; up for a limit, so it stays at or above the request)."""
    mib = 1 << 20
    if name != "cpu" and amount >= mib and amount % mib:
        amount += (mib - amount % mib) if up else -(amount % mib)
    return format_amount(name, amount)
