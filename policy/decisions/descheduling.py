"""LowNodeLoad on a cluster's newest snapshot, and the coherence of its load-aware stack.

The engine does the work (``scoring.descheduler``): this module picks its inputs — the stored
descheduler configuration and koordlet thresholds, the scheduler configuration's LoadAware args,
the newest snapshot, taken as "now" the time it was read — and lays the answers out as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rest_framework.utils.encoders import JSONEncoder

from policy.clusters.engine import engine_for, snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.decisions import evaluation
from policy.engine import client
from policy.engine.questions import Refused, question
from policy.policies import descheduler
from policy.policies.models import DeschedulerConfiguration
from scoring import (
    ANNOTATION_USAGE_THRESHOLDS,
    DEFAULT_NODE_METRIC_EXPIRATION_SECONDS,
    CoherenceFinding,
    ConfigurationInvalid,
    Engine,
    InputError,
    LoadAwareScheduling,
    LoadAwareSide,
    LowNodeLoadNode,
    balance_low_node_load,
    check_coherence,
    load_filtered,
    place_evicted,
)

LOADAWARE = "LoadAwareScheduling"


# -- asked of the engine tier (the reports need the cluster's held snapshot) -------------------


def lownodeload_report(cluster: Cluster, *, place: bool = True) -> dict[str, Any]:
    """What one LowNodeLoad round would do on the newest snapshot (a dry run); with
    ``place``, where the scheduler would place each evicted pod now. :class:`NoSnapshot`
    when the cluster has none."""
    return _ask(cluster, "lownodeload-report", {"place": place})


def coherence_report(cluster: Cluster) -> dict[str, Any]:
    """``{"findings": [...]}`` over the newest snapshot's nodes."""
    return _ask(cluster, "coherence-report", {})


def preview_edit(cluster: Cluster, row: Any, patch: Mapping[str, Any]) -> dict[str, Any]:
    """What a LowNodeLoad args edit would change on the newest snapshot, before it is saved:
    the nodes above high before and after, and the findings it resolves or creates.
    :class:`descheduler.EditInvalid` when koord-descheduler would refuse the result (checked
    here, before the engine is asked)."""
    descheduler.patched(row, patch)
    return _ask(cluster, "lownodeload-preview", {"row": row.pk, "patch": dict(patch)})


def _ask(cluster: Cluster, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    try:
        return client.ask(cluster.pk, name, {"cluster": cluster.pk, **payload})
    except Refused as exc:
        if exc.field == "snapshot":
            raise NoSnapshot(str(exc)) from None
        raise InputError(str(exc)) from None


def _answered(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` as JSON (times as the API writes them)."""
    answer: dict[str, Any] = json.loads(json.dumps(report, cls=JSONEncoder))
    return answer


def _cluster(payload: dict[str, Any]) -> Cluster:
    cluster = Cluster.objects.filter(pk=payload["cluster"]).first()
    if cluster is None:
        raise Refused("cluster", f"no cluster {payload['cluster']}")
    return cluster


@question("lownodeload-report")
def _lownodeload_question(payload: dict[str, Any]) -> dict[str, Any]:
    with _refusing():
        return _answered(_lownodeload_here(_cluster(payload), place=payload["place"]))


@question("coherence-report")
def _coherence_question(payload: dict[str, Any]) -> dict[str, Any]:
    with _refusing():
        return _answered(_coherence_here(_cluster(payload)))


@question("lownodeload-preview")
def _preview_question(payload: dict[str, Any]) -> dict[str, Any]:
    cluster = _cluster(payload)
    row = DeschedulerConfiguration.objects.filter(pk=payload["row"], cluster=cluster).first()
    if row is None:
        raise Refused("row", f"no descheduler configuration {payload['row']}")
    with _refusing():
        return _answered(_preview_here(cluster, row, payload["patch"]))


@contextmanager
def _refusing() -> Iterator[None]:
    """The reports' errors, carried back to the asking process."""
    try:
        yield
    except NoSnapshot as exc:
        raise Refused("snapshot", str(exc)) from None
    except InputError as exc:
        raise Refused("input", str(exc)) from None


class NoSnapshot(Exception):
    """The cluster has no snapshot yet."""


@dataclass
class SchedulerSide:
    engine: Engine | None
    loadaware: LoadAwareSide | None
    origin: str
    profile: str = ""  # the profile whose LoadAware thresholds ``loadaware`` holds


def scheduler_side(cluster: Cluster) -> SchedulerSide:
    """The engine for the cluster's scheduler configuration and its LoadAware thresholds
    (None when no profile enables LoadAwareScheduling)."""
    try:
        choice = evaluation.choose_configuration(cluster, None)
        engine = engine_for(choice.document, choice.target)
    except (evaluation.EvaluationError, ConfigurationInvalid) as exc:
        return SchedulerSide(None, None, f"scheduler configuration not usable: {exc}")
    origin = (
        f"scheduler configuration #{choice.id}"
        if choice.id is not None
        else "kube-scheduler defaults"
    )
    return side_of(engine, origin)


def side_of(engine: Engine, origin: str) -> SchedulerSide:
    """``engine``'s first LoadAware profile and its thresholds, named after ``origin``."""
    for name, framework in engine.frameworks.items():
        plugin = framework.instances.get(LOADAWARE)
        if isinstance(plugin, LoadAwareScheduling):
            args = plugin.config
            side = LoadAwareSide(
                usage=dict(args.usage_thresholds),
                prod=dict(args.prod_usage_thresholds),
                expiration_seconds=args.node_metric_expiration_seconds
                or DEFAULT_NODE_METRIC_EXPIRATION_SECONDS,
                source=f"{origin}, profile {name}, {LOADAWARE} args",
            )
            return SchedulerSide(engine, side, origin, name)
    return SchedulerSide(engine, None, origin)


def _newest(cluster: Cluster) -> ClusterSnapshot:
    stored = cluster.latest_snapshot()
    if stored is None:
        raise NoSnapshot(f"cluster {cluster.name} has no snapshot yet")
    return stored


def _now_ns(stored: ClusterSnapshot) -> int:
    return int(stored.taken_at.timestamp()) * 10**9 + stored.taken_at.microsecond * 1000


def _document_state(parsed: descheduler.ParsedDescheduler | None) -> dict[str, Any]:
    if parsed is None:
        return {"stored": False}
    return {
        "stored": True,
        "id": parsed.row.pk,
        "configmap": parsed.row.configmap,
        "valid": parsed.valid,
        "errors": [e.to_dict() for e in parsed.errors],
        "unreadable": parsed.unreadable,
        "lownodeload_enabled": bool(parsed.config and parsed.config.lownodeload_enabled),
    }


def _node(load: LowNodeLoadNode) -> dict[str, Any]:
    resources = list(load.high) or list(load.measured)
    return {
        "node": load.name,
        "pool": load.pool,
        "state": load.state,
        "category": load.category,
        "over": load.over_resources,
        "allocatable_source": load.allocatable_source,
        "resources": {
            name: {
                "usage": load.measured.get(name),
                "allocatable": load.allocatable.get(name, 0),
                "percent": load.percent(name, load.measured) if load.measured else None,
                "low": load.low.get(name),
                "high": load.high.get(name),
                "prod_usage": load.measured_prod.get(name),
                "prod_low": load.prod_low.get(name),
                "prod_high": load.prod_high.get(name),
            }
            for name in resources
        },
        "anomalous": load.anomalous,
        "rounds_to_anomaly": load.rounds_to_anomaly,
    }


def _lownodeload_here(cluster: Cluster, *, place: bool = True) -> dict[str, Any]:
    """What one LowNodeLoad round would do on the newest snapshot (a dry run); with
    ``place``, where the scheduler would place each evicted pod now."""
    stored = _newest(cluster)
    parsed = descheduler.descheduler_of(cluster)
    body: dict[str, Any] = {
        "cluster": cluster.pk,
        "snapshot": {"id": stored.pk, "taken_at": stored.taken_at},
        "configuration": _document_state(parsed),
        "enabled": False,
        "nodes": [],
        "pools": [],
        "evictions": [],
        "findings": [],
    }
    config = parsed.config if parsed is not None else None
    snapshot = snapshot_for(stored)
    side = scheduler_side(cluster)
    body["findings"] = [f.to_dict() for f in _findings(cluster, stored, snapshot, side, config)]
    if config is None or config.lownodeload is None:
        return body
    body["enabled"] = True
    body["interval_seconds"] = config.interval_ns / 10**9
    result = balance_low_node_load(
        snapshot, config.lownodeload, config.migration, now_ns=_now_ns(stored)
    )
    body["paused"] = result.paused
    body["nodes"] = [_node(result.nodes[name]) for name in sorted(result.nodes)]
    body["over"] = result.over
    body["pools"] = [
        {
            "name": pool.name,
            "nodes": len(pool.nodes),
            "use_deviation_thresholds": pool.use_deviation_thresholds,
            "low": pool.low,
            "high": pool.high,
            "outcome": pool.outcome,
            "candidates": {
                source: [
                    {
                        "pod": f"{c.pod.namespace}/{c.pod.name}",
                        "removable": c.removable,
                        "reason": c.reason,
                    }
                    for c in candidates
                ]
                for source, candidates in pool.candidates.items()
            },
        }
        for pool in result.pools
    ]
    placed = (
        place_evicted(side.engine, snapshot, result.evictions, stored.taken_at)
        if side.engine is not None and place
        else []
    )
    body["evictions"] = [
        {
            "pod": f"{e.pod.namespace}/{e.pod.name}",
            "node": e.node,
            "pool": e.pool,
            "prod": e.prod,
            "reason": e.reason,
            "placed_on": placed[i].node if placed else None,
            "feasible_nodes": placed[i].feasible if placed else None,
            "placement_error": placed[i].error if placed else None,
            "placed": bool(placed),
        }
        for i, e in enumerate(result.evictions)
    ]
    return body


def _averages(stored: ClusterSnapshot, snapshot: Any, config: Any) -> dict[str, dict[str, float]]:
    """Each deviation-mode pool's average usage on the snapshot (rule R9 compares S with
    ``average + high``); none when no pool uses deviation thresholds."""
    args = config.lownodeload if config is not None else None
    if args is None or not any(p.use_deviation_thresholds for p in args.node_pools):
        return {}
    result = balance_low_node_load(snapshot, args, config.migration, now_ns=_now_ns(stored))
    return {pool.name: pool.average for pool in result.pools if pool.use_deviation_thresholds}


def _findings(
    cluster: Cluster,
    stored: ClusterSnapshot,
    snapshot: Any,
    side: SchedulerSide,
    config: Any,
    refused: int | None = None,
) -> list[CoherenceFinding]:
    """The coherence findings; ``refused`` (the nodes LoadAware's filter refuses now) when the
    caller has counted it already."""
    _, koordlet, _ = descheduler.koordlet_of(cluster)
    return check_coherence(
        snapshot,
        side.loadaware,
        config,
        koordlet,
        averages=_averages(stored, snapshot, config),
        descheduler_source=descheduler.descheduler_place(cluster),
        koordlet_source=descheduler.koordlet_place(cluster),
        refused=_refused(stored, snapshot, side) if refused is None else refused,
    )


def findings_between(
    cluster: Cluster,
    stored: ClusterSnapshot,
    before: tuple[Any, SchedulerSide, int],
    after: tuple[Any, SchedulerSide, int],
) -> dict[str, list[dict[str, Any]]]:
    """The coherence findings a scheduler-side change resolves and creates, with the stored
    descheduler and koordlet documents; each side is the snapshot it runs on, its scheduler
    side and how many nodes its LoadAware filter refuses (the impact counted them)."""
    parsed = descheduler.descheduler_of(cluster)
    config = parsed.config if parsed is not None else None
    was, will = (
        _finding_keys(
            [f.to_dict() for f in _findings(cluster, stored, snap, side, config, refused)]
        )
        for snap, side, refused in (before, after)
    )
    return {
        "resolves": [f for key, f in was.items() if key not in will],
        "creates": [f for key, f in will.items() if key not in was],
    }


def _refused(stored: ClusterSnapshot, snapshot: Any, side: SchedulerSide) -> int | None:
    """How many nodes the LoadAware profile's filter refuses now (rule R5)."""
    if side.engine is None or side.loadaware is None:
        return None
    return int(load_filtered(side.engine, side.profile, snapshot, stored.taken_at).sum())


def _coherence_here(cluster: Cluster) -> dict[str, Any]:
    """``{"findings": [...]}`` over the newest snapshot's nodes."""
    stored = _newest(cluster)
    parsed = descheduler.descheduler_of(cluster)
    config = parsed.config if parsed is not None else None
    side = scheduler_side(cluster)
    findings = _findings(cluster, stored, snapshot_for(stored), side, config)
    return {
        "cluster": cluster.pk,
        "snapshot": {"id": stored.pk, "taken_at": stored.taken_at},
        "annotation": ANNOTATION_USAGE_THRESHOLDS,
        "findings": [f.to_dict() for f in findings],
    }


def _finding_keys(findings: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Findings by (rule, summary): an edit that moves a value changes its summary."""
    return {(f["rule"], f["summary"]): f for f in findings}


def _preview_here(cluster: Cluster, row: Any, patch: Mapping[str, Any]) -> dict[str, Any]:
    """What a LowNodeLoad args edit would change on the newest snapshot, before it is saved:
    the nodes above high before and after, and the findings it resolves or creates.
    :class:`descheduler.EditInvalid` when koord-descheduler would refuse the result."""
    _, after_config = descheduler.patched(row, patch)
    before_config = descheduler.parse_descheduler(row).config
    stored = _newest(cluster)
    snapshot = snapshot_for(stored)
    side = scheduler_side(cluster)

    def over(config: Any) -> list[str]:
        if config is None or config.lownodeload is None:
            return []
        return balance_low_node_load(
            snapshot, config.lownodeload, config.migration, now_ns=_now_ns(stored)
        ).over

    before = _finding_keys(
        [f.to_dict() for f in _findings(cluster, stored, snapshot, side, before_config)]
    )
    after = _finding_keys(
        [f.to_dict() for f in _findings(cluster, stored, snapshot, side, after_config)]
    )
    return {
        "cluster": cluster.pk,
        "snapshot": {"id": stored.pk, "taken_at": stored.taken_at},
        "over_before": over(before_config),
        "over_after": over(after_config),
        "resolves": [f for key, f in before.items() if key not in after],
        "creates": [f for key, f in after.items() if key not in before],
    }
