"""The impact of a configuration change before it is saved: which nodes the LoadAware filter
refuses before and after (as the dashboard's "filtered now" counts them), which pending pods
the engine can place before and after, and which nodes' effective thresholds change.

The "after" LoadAware state is made from the "before" one when only thresholds differ
(``LoadAwareScheduling.share_state``) and is dropped afterwards either way
(``Snapshot.transient_extensions``), so the cached snapshot keeps nothing of a change that was
not saved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from scoring.advisor.pending import PendingPods
from scoring.advisor.sweep import PROBE
from scoring.engine import Engine
from scoring.errors import InputError
from scoring.framework import Cycle
from scoring.objects import Pod, parse_pod
from scoring.plugins.loadaware.args import PLUGIN_NAME
from scoring.plugins.loadaware.filter import filter_nodes, filter_plan
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.plugins.loadaware.state import IncomingPod
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS
from scoring.simulation.equivalence import equivalence_key
from scoring.snapshot import BoolArray, IntArray, Snapshot


@dataclass(frozen=True)
class _Load:
    filtered: BoolArray
    limits: IntArray | None  # resources × nodes, the non-prod thresholds
    resources: tuple[str, ...]


def impact(
    before: Engine,
    after: Engine,
    profile: str,
    snapshot: Snapshot,
    now: datetime,
    profile_after: str | None = None,
    annotations_after: Mapping[str, str | None] | None = None,
    recorded: Sequence[tuple[int, Pod]] = (),
) -> dict[str, Any]:
    """``before`` and ``after`` compared on ``snapshot``: the issue's impact answer, for the
    load filter of ``profile`` (named ``profile_after`` after the change, when renamed). With
    ``annotations_after`` (node name → its usage-thresholds annotation after the change, None:
    removed) the "after" side also runs on the nodes so annotated (a node threshold policy's
    edit, once pushed). ``recorded`` (decision id, its pod) are evaluated again under both:
    ``decisions`` names those that would pick another node."""
    names = snapshot.node_names
    cycle = Cycle(parse_pod(PROBE), snapshot, now)
    with snapshot.transient_extensions():
        old = _load(before, profile, cycle, None)
        changed = annotated(snapshot, annotations_after or {})
        variant = snapshot.variant(changed) if changed else snapshot
        cycle_after = Cycle(cycle.pod, variant, now) if changed else cycle
        new = _load(after, profile_after or profile, cycle_after, before, profile)
        placed = _placeable(before, after, snapshot, now, variant)
        renamed = {profile: profile_after} if profile_after and profile_after != profile else {}
        decisions = _recorded(before, after, snapshot, variant, now, recorded, renamed)
    added = np.flatnonzero(new.filtered & ~old.filtered)
    removed = np.flatnonzero(old.filtered & ~new.filtered)
    return {
        "filtered": {
            "before": int(old.filtered.sum()),
            "after": int(new.filtered.sum()),
            "added": [names[int(i)] for i in added],
            "removed": [names[int(i)] for i in removed],
        },
        "pending": placed,
        "thresholds_changed": [names[int(i)] for i in _changed_thresholds(old, new)],
        "decisions": decisions,
    }


def _recorded(
    before: Engine,
    after: Engine,
    snapshot: Snapshot,
    variant: Snapshot,
    now: datetime,
    recorded: Sequence[tuple[int, Pod]],
    renamed: Mapping[str, str],
) -> dict[str, Any]:
    """Recorded decisions' pods evaluated again before and after the change (a score change
    moves pods without filtering any node): those whose node would differ."""
    changed = []
    for decision, pod in recorded:
        was = _selected(before, pod, snapshot, now)
        moved = replace(pod, scheduler_name=renamed.get(pod.scheduler_name, pod.scheduler_name))
        will = _selected(after, moved, variant, now)
        if was != will:
            changed.append({"decision": decision, "pod": pod.key, "before": was, "after": will})
    return {"evaluated": len(recorded), "changed": changed}


def _selected(engine: Engine, pod: Pod, snapshot: Snapshot, now: datetime) -> str | None:
    """The node ``engine`` picks for ``pod`` (None: none fits, or no profile of its name)."""
    try:
        return engine.evaluate(pod, snapshot, now).selected_node
    except InputError:
        return None


def annotated(snapshot: Snapshot, annotations: Mapping[str, str | None]) -> list[dict[str, Any]]:
    """The Node objects of ``snapshot`` whose usage-thresholds annotation ``annotations``
    changes (unknown node names are ignored), carrying the new one."""
    out = []
    for name, value in annotations.items():
        index = snapshot.index.get(name)
        if index is None:
            continue
        raw = snapshot.nodes[index].raw
        meta = dict(raw.get("metadata") or {})
        notes = dict(meta.get("annotations") or {})
        if notes.get(ANNOTATION_USAGE_THRESHOLDS) == value:
            continue
        if value is None:
            notes.pop(ANNOTATION_USAGE_THRESHOLDS, None)
        else:
            notes[ANNOTATION_USAGE_THRESHOLDS] = value
        out.append({**raw, "metadata": {**meta, "annotations": notes}})
    return out


def load_filtered(engine: Engine, profile: str, snapshot: Snapshot, now: datetime) -> BoolArray:
    """The nodes ``profile``'s LoadAware filter refuses now for a non-prod pod that adds
    nothing (the dashboard's "filtered now"); none when the profile does not filter by load."""
    with snapshot.transient_extensions():
        return _load(engine, profile, Cycle(parse_pod(PROBE), snapshot, now), None).filtered


def _load(
    engine: Engine, profile: str, cycle: Cycle, base: Engine | None, base_profile: str = ""
) -> _Load:
    """The nodes the profile's load filter refuses for a non-prod pod that adds nothing (none
    when the profile does not enable the plugin) and its thresholds."""
    n = len(cycle.snapshot)
    framework = engine.frameworks.get(profile)
    plugin = None if framework is None else framework.instances.get(PLUGIN_NAME)
    if not isinstance(plugin, LoadAwareScheduling):
        return _Load(np.zeros(n, dtype=bool), None, ())
    if base is not None:
        original = base.frameworks.get(base_profile or profile)
        shared = None if original is None else original.instances.get(PLUGIN_NAME)
        if isinstance(shared, LoadAwareScheduling):
            plugin.share_state(cycle, shared)
    state = plugin.state(cycle)
    empty = IncomingPod(np.zeros(len(state.resources), dtype=np.int64), "", daemonset=False)
    refused = ~filter_nodes(plugin.config, state, empty, cycle.now).passed
    if framework is not None and not any(p is plugin for p in framework.filters):
        refused = np.zeros(n, dtype=bool)  # enabled for scoring only: it filters nothing
    limits = filter_plan(state, pod_is_prod=False).limits
    return _Load(refused, limits, tuple(state.resources))


def _changed_thresholds(old: _Load, new: _Load) -> IntArray:
    """Nodes whose threshold for some resource differs (a resource only one side checks
    counts as changed)."""
    if old.limits is None and new.limits is None:
        return np.zeros(0, dtype=np.int64)
    resources = sorted(set(old.resources) | set(new.resources))
    n = len(old.filtered)
    changed = np.zeros(n, dtype=bool)
    for name in resources:
        a = _row(old, name, n)
        b = _row(new, name, n)
        changed |= a != b
    result: IntArray = np.flatnonzero(changed).astype(np.int64)
    return result


def _row(load: _Load, name: str, n: int) -> IntArray:
    if load.limits is None or name not in load.resources:
        return np.zeros(n, dtype=np.int64)
    row: IntArray = load.limits[load.resources.index(name)]
    return row


def _placeable(
    before: Engine, after: Engine, snapshot: Snapshot, now: datetime, variant: Snapshot
) -> dict[str, Any]:
    """The snapshot's pending pods each configuration can place (all filters), by class;
    ``after`` places them on ``variant`` (the snapshot itself, or its re-annotated nodes)."""
    pending = PendingPods(before, snapshot, parse_pod(PROBE), now)
    pending_after = (
        pending if variant is snapshot else PendingPods(after, variant, parse_pod(PROBE), now)
    )
    counts = [0, 0]
    gained: list[str] = []
    lost: list[str] = []
    members = _members(snapshot)
    for pod, size in pending.classes:
        was = _places(before, pod, snapshot, now, pending)
        now_placed = _places(after, pod, variant, now, pending_after)
        counts[0] += size * was
        counts[1] += size * now_placed
        if was != now_placed:
            (gained if now_placed else lost).extend(members[id(pod)])
    return {
        "placeable_before": counts[0],
        "placeable_after": counts[1],
        "newly_placeable": sorted(gained),
        "newly_unplaceable": sorted(lost),
    }


def _members(snapshot: Snapshot) -> dict[int, list[str]]:
    """Each pending pod's class representative (by id) → the keys of the pods of its class."""
    first: dict[object, Pod] = {}
    out: dict[int, list[str]] = {}
    for pod in snapshot.pending:
        head = first.setdefault(equivalence_key(pod), pod)
        out.setdefault(id(head), []).append(pod.key)
    return out


def _places(
    engine: Engine, pod: Pod, snapshot: Snapshot, now: datetime, pending: PendingPods
) -> bool:
    try:
        framework = engine.framework_for(pod)
    except InputError:
        return False
    return pending.placeable_by(framework, pod)
