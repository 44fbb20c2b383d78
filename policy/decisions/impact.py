"""The impact of a policy edit before it is saved (a service): the edit is made through the
editing service, which validates the whole configuration as a save would, inside a
transaction that is then rolled back; the engine compares the configuration before and after
on the cluster's newest snapshot. Nothing is saved, recorded or pushed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from django.db import transaction

from policy.accounts.changes import ChangeContext
from policy.clusters.engine import engine_for, snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.decisions import descheduling, evaluation
from policy.decisions.models import PlacementDecision
from policy.engine import client
from policy.engine.questions import Refused, question
from policy.policies.models import LoadAwareSchedulingArgs, SchedulerProfile
from policy.sync.thresholds_in_force import thresholds_in_force
from scoring import LOADAWARE, InputError, Pod, Target, annotated_nodes, gc_paused, parse_pod
from scoring import placement_impact as impact

DEFAULT_SCHEDULER = "default-scheduler"


class NoSnapshot(ValueError):
    """The cluster has no snapshot to compare on."""


class UnknownProfile(ValueError):
    """The profile asked about is not one of the configuration's."""


class _RolledBack(Exception):
    def __init__(self, choice: evaluation.ConfigurationChoice) -> None:
        super().__init__("rolled back")
        self.choice = choice


def _after(cluster: Cluster, edit: Callable[[], Any]) -> evaluation.ConfigurationChoice:
    """The cluster's configuration as ``edit`` would leave it, without keeping the edit."""
    try:
        with transaction.atomic():
            edit()
            raise _RolledBack(evaluation.choose_configuration(cluster, None))
    except _RolledBack as done:
        return done.choice


def _profile_names(instance: Any, values: Mapping[str, Any]) -> tuple[str, str]:
    """The profile's schedulerName before and after the edit."""
    if not isinstance(instance, SchedulerProfile | LoadAwareSchedulingArgs):
        raise TypeError(f"no impact for {type(instance).__name__}")
    row = instance if isinstance(instance, SchedulerProfile) else instance.profile
    profile = row.scheduler_name or DEFAULT_SCHEDULER
    renamed = values.get("scheduler_name") if isinstance(instance, SchedulerProfile) else None
    return profile, (renamed or DEFAULT_SCHEDULER) if renamed is not None else profile


def compare(
    cluster: Cluster,
    before: evaluation.ConfigurationChoice,
    after: evaluation.ConfigurationChoice,
    profile: str | None,
    profile_after: str | None,
    annotations_after: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """The engine's impact answer for two configurations of ``cluster`` on its newest
    snapshot (:class:`NoSnapshot` without one), from the engine tier (the configurations travel
    as documents: the edit that made ``after`` was rolled back). ``profile`` None: the first
    profile with LoadAware, as the dashboard shows; ``annotations_after``: the nodes'
    usage-thresholds annotations after the change (a threshold policy's)."""
    stored = cluster.latest_snapshot()
    if stored is None:
        raise NoSnapshot(f"cluster {cluster.name} has no snapshot yet")
    payload = {
        "snapshot": stored.pk,
        "before": _side(before),
        "after": _side(after),
        "profile": profile,
        "profile_after": profile_after,
        "annotations_after": dict(annotations_after or {}),
        "recorded": _recorded(cluster),
    }
    try:
        answer: dict[str, Any] = client.ask(cluster.pk, "impact", payload)
    except Refused as exc:
        raise NoSnapshot(str(exc)) from None
    return answer


def _side(choice: evaluation.ConfigurationChoice) -> dict[str, Any]:
    target = dataclasses.asdict(choice.target) if choice.target is not None else None
    return {"document": choice.document, "target": target}


def _engine(side: dict[str, Any]) -> Any:
    target = Target(**side["target"]) if side["target"] is not None else None
    return engine_for(side["document"], target)


@question("impact")
def _impact_question(payload: dict[str, Any]) -> dict[str, Any]:
    stored = ClusterSnapshot.snapshots.summaries().filter(pk=payload["snapshot"]).first()
    if stored is None:
        raise Refused("snapshot", f"no snapshot {payload['snapshot']}")
    before = _engine(payload["before"])
    after = _engine(payload["after"])
    profile = payload["profile"] or _loadaware_profile(before)
    profile_after = payload["profile_after"] or profile
    snapshot = snapshot_for(stored)
    annotations = payload.get("annotations_after") or {}
    with gc_paused():
        answer = impact(
            before,
            after,
            profile,
            snapshot,
            stored.taken_at,
            profile_after=profile_after,
            annotations_after=annotations or None,
            recorded=_pods(payload.get("recorded") or ()),
        )
        changed = annotated_nodes(snapshot, annotations)
        filtered = answer["filtered"]
        findings = descheduling.findings_between(
            stored.cluster,
            stored,
            (
                snapshot,
                descheduling.side_of(before, "the scheduler configuration now"),
                filtered["before"],
            ),
            (
                snapshot.variant(changed) if changed else snapshot,
                descheduling.side_of(after, "the scheduler configuration after this change"),
                filtered["after"],
            ),
        )
    return {**answer, "findings": findings, "snapshot": stored.pk, "profile": profile_after}


RECORDED = 20  # the newest recorded decisions an impact evaluates again


def _recorded(cluster: Cluster) -> list[dict[str, Any]]:
    """The cluster's newest recorded decisions (one per pod), each pod under the profile it
    was evaluated with."""
    rows = PlacementDecision.objects.filter(cluster=cluster).only("pk", "pod", "profile")
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for row in rows.order_by("-created", "-id")[: RECORDED * 3]:
        meta = row.pod.get("metadata") or {}
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        if key in seen:
            continue
        seen.add(key)
        pod = {**row.pod, "spec": {**(row.pod.get("spec") or {}), "schedulerName": row.profile}}
        out.append({"decision": row.pk, "pod": pod})
        if len(out) == RECORDED:
            break
    return out


def _pods(recorded: Any) -> list[tuple[int, Pod]]:
    """The recorded decisions' pods, read as the engine reads a pod (one it cannot read is
    left out: it was stored before a stricter reader)."""
    out = []
    for item in recorded:
        try:
            out.append((int(item["decision"]), parse_pod(item["pod"])))
        except InputError:
            continue
    return out


def _loadaware_profile(engine: Any) -> str:
    """The first profile whose LoadAwareScheduling filters (the dashboard's), else the default
    scheduler's name (whose answer then filters nothing)."""
    for name, framework in engine.frameworks.items():
        if LOADAWARE in framework.instances:
            return str(name)
    return DEFAULT_SCHEDULER


def update_impact(
    service: Any, instance: Any, values: Mapping[str, Any], ctx: ChangeContext
) -> dict[str, Any]:
    """What saving ``values`` (the PATCH's fields) into a profile or its LoadAware args would
    change. Raises the editing service's errors (``PolicyInvalid``) as a save would, and
    :class:`NoSnapshot`."""
    profile, profile_after = _profile_names(instance, values)
    row = instance if isinstance(instance, SchedulerProfile) else instance.profile
    cluster = row.configuration.cluster
    if cluster.latest_snapshot() is None:
        raise NoSnapshot(f"cluster {cluster.name} has no snapshot yet")
    before = evaluation.choose_configuration(cluster, None)
    after = _after(cluster, lambda: service.update(instance.pk, values, ctx, expected_version=None))
    return compare(cluster, before, after, profile, profile_after)


def threshold_policy_impact(
    cluster: Cluster, edit: Callable[[], Any], profile: str | None = None
) -> dict[str, Any]:
    """What saving a node threshold policy edit (``edit`` makes it through the editing service,
    raising its errors as a save would) and then pushing would change: before is what the
    nodes' annotations give now, after what they give once a push writes what the policies
    then ask for (an annotation set outside schedboard is left, as a push leaves it), with
    ``annotations_changed`` naming the nodes a push would write or clear."""
    stored = cluster.latest_snapshot()
    if stored is None:
        raise NoSnapshot(f"cluster {cluster.name} has no snapshot yet")
    configuration = evaluation.choose_configuration(cluster, None)
    if profile is not None:
        names = {
            str(p.get("schedulerName") or DEFAULT_SCHEDULER)
            for p in (configuration.document or {}).get("profiles") or [{}]
        }
        if profile not in names:
            raise UnknownProfile(f"no profile {profile!r}; the configuration has {sorted(names)}")
    written = _written_after(cluster, stored, edit)
    answer = compare(cluster, configuration, configuration, profile, profile, written)
    return {**answer, "annotations_changed": sorted(written)}


class _Written(Exception):
    def __init__(self, annotations: dict[str, str | None]) -> None:
        super().__init__("rolled back")
        self.annotations = annotations


def _written_after(
    cluster: Cluster, stored: ClusterSnapshot, edit: Callable[[], Any]
) -> dict[str, str | None]:
    """Node → the annotation a push would write (None: remove) once ``edit`` is saved; the
    edit is rolled back."""
    try:
        with transaction.atomic():
            edit()
            _, _, rows = thresholds_in_force(cluster, stored=stored)
            raise _Written({r.node: r.desired for r in rows if r.push_writes})
    except _Written as done:
        return done.annotations


def previewed(cluster: Cluster, instance: Any, values: Mapping[str, Any]) -> tuple[str, str] | None:
    """The profile names an editor's preview compares (None: the object has no impact)."""
    if not isinstance(instance, SchedulerProfile | LoadAwareSchedulingArgs):
        return None
    return _profile_names(instance, values)
