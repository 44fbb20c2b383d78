"""LoadAware conformance vectors as real Kubernetes objects, and runners for them.

The vectors (tests/scoring/conformance/loadaware, see its README) describe nodes, NodeMetrics and
pods compactly, with times as ages before "now". These helpers build the v1 Nodes, Pods (with
``PodScheduled`` conditions at those ages) and ``slo.koordinator.sh/v1alpha1`` NodeMetrics an
admin would pass to ``python -m scoring evaluate``, plus a configuration enabling only
LoadAwareScheduling with the vector's args.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from scoring.durations import SECOND, format_duration
from scoring.framework import Cycle, FilterResult
from scoring.objects import parse_pod
from scoring.plugins.loadaware import LoadAwareScheduling
from scoring.plugins.loadaware.args import default_args
from scoring.snapshot import Snapshot
from scoring.timeutil import format_time, parse_time
from tests.scoring.builders import make_container, make_node, make_pod, resource_list

PLUGIN = "LoadAwareScheduling"
VECTOR_DIR = Path(__file__).parent / "conformance" / "loadaware"
NOW = "2026-07-24T12:00:00Z"
PRIORITY_NAMES = {"prod": "koord-prod", "mid": "koord-mid", "batch": "koord-batch"}


def load_vectors() -> list[tuple[str, dict[str, Any]]]:
    return [(p.stem, json.loads(p.read_text())) for p in sorted(VECTOR_DIR.glob("*.json"))]


def ago(seconds: float, now: str = NOW) -> str:
    return format_time(parse_time(now) - timedelta(seconds=seconds))


def _resources(amounts: Mapping[str, int] | None) -> dict[str, Any]:
    return {"resources": resource_list(amounts)}


def node_metric(metric: Mapping[str, Any], now: str = NOW) -> dict[str, Any]:
    """A NodeMetric from a vector's ``node_metrics[]`` entry."""
    spec: dict[str, Any] = {}
    if metric.get("report_interval_seconds") is not None:
        spec["metricCollectPolicy"] = {"reportIntervalSeconds": metric["report_interval_seconds"]}
    status: dict[str, Any] = {}
    if metric.get("update_age_seconds") is not None:
        status["updateTime"] = ago(metric["update_age_seconds"], now)
    if metric.get("node_usage") is not None:
        info: dict[str, Any] = {"nodeUsage": _resources(metric["node_usage"])}
        if metric.get("system_usage") is not None:
            info["systemUsage"] = _resources(metric["system_usage"])
        windows = []
        for window in metric.get("aggregated") or []:
            usage = {kind: _resources(u) for kind, u in (window.get("usages") or {}).items()}
            windows.append(
                {"duration": format_duration(window["duration_seconds"] * SECOND), "usage": usage}
            )
        if windows:
            info["aggregatedNodeUsages"] = windows
        status["nodeMetric"] = info
    pods = []
    for pod in metric.get("pods_usage") or []:
        entry: dict[str, Any] = {
            "namespace": pod["namespace"],
            "name": pod["name"],
            "podUsage": _resources(pod["usage"]),
        }
        if pod.get("priority_class"):
            entry["priority"] = PRIORITY_NAMES[pod["priority_class"]]
        pods.append(entry)
    if pods:
        status["podsMetric"] = pods
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": metric["node"]},
        "spec": spec,
        "status": status,
    }


def pod_object(pod: Mapping[str, Any], now: str = NOW) -> dict[str, Any]:
    """A v1 Pod from a vector pod (``node`` set for existing pods)."""
    name = pod.get("name") or "empty-pod"
    containers = []
    if pod.get("requests") or pod.get("limits"):
        containers.append(make_container("c", pod.get("requests"), pod.get("limits")))
    spec: dict[str, Any] = {}
    if pod.get("priority") is not None:
        spec["priority"] = pod["priority"]
    status: dict[str, Any] = {}
    if pod.get("phase"):
        status["phase"] = pod["phase"]
    conditions = []
    if pod.get("node"):
        # No PodScheduled condition in Go means "stamped when the cache saw it", i.e. now.
        age = pod.get("scheduled_age_seconds") if pod.get("pod_scheduled_condition") else 0
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": ago(age or 0, now)}
        )
    if pod.get("initialized_age_seconds") is not None:
        conditions.append(
            {
                "type": "Initialized",
                "status": "True",
                "lastTransitionTime": ago(pod["initialized_age_seconds"], now),
            }
        )
    if conditions:
        status["conditions"] = conditions
    manifest = make_pod(
        name,
        namespace=pod.get("namespace") or "default",
        containers=containers,
        node_name=pod.get("node"),
        labels=pod.get("labels"),
        annotations=pod.get("annotations"),
        spec=spec,
        status=status or {"phase": "Pending"},
    )
    manifest["metadata"]["uid"] = f"uid-{manifest['metadata']['namespace']}-{name}"
    if pod.get("owner_kinds"):
        manifest["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": kind, "name": f"owner-{i}", "uid": f"owner-{i}"}
            for i, kind in enumerate(pod["owner_kinds"])
        ]
    return manifest


def cluster_objects(vector: Mapping[str, Any], now: str = NOW) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        make_node(
            n["name"],
            n.get("allocatable") or {},
            labels=n.get("labels"),
            annotations=n.get("annotations"),
        )
        for n in vector["nodes"]
    ]
    objects += [node_metric(m, now) for m in vector.get("node_metrics") or []]
    objects += [pod_object(p, now) for p in vector.get("existing_pods") or []]
    return objects


def incoming_pod(vector: Mapping[str, Any]) -> dict[str, Any]:
    return pod_object(vector.get("pod") or {})


def config(args: Mapping[str, Any], *, filter_plugin: bool, score_plugin: bool) -> dict[str, Any]:
    """One profile with every default filter and score disabled and only LoadAware enabled."""
    star = [{"name": "*"}]
    plugins: dict[str, Any] = {"filter": {"disabled": star}, "score": {"disabled": star}}
    if filter_plugin:
        plugins["filter"]["enabled"] = [{"name": PLUGIN}]
    if score_plugin:
        plugins["score"]["enabled"] = [{"name": PLUGIN, "weight": 1}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": plugins,
                "pluginConfig": [{"name": PLUGIN, "args": dict(args)}],
            }
        ],
    }


# -- in-process evaluation (plugin + snapshot, no configuration loading) -------------------------


def snapshot_of(objects: Sequence[Mapping[str, Any]]) -> Snapshot:
    return Snapshot.from_objects(objects, warn=lambda message: None)


def run_plugin(
    vector: Mapping[str, Any], now: str = NOW
) -> tuple[LoadAwareScheduling, Cycle, FilterResult, np.ndarray]:
    """Filter and score the vector's pod on every node, in process."""
    snapshot = snapshot_of(cluster_objects(vector, now))
    plugin = LoadAwareScheduling(default_args(vector["args"]))
    cycle = Cycle(parse_pod(incoming_pod(vector)), snapshot, parse_time(now))
    plugin.pre_filter(cycle)
    result = plugin.filter(cycle)
    scores = plugin.score(cycle, np.arange(len(snapshot), dtype=np.int64))
    return plugin, cycle, result, scores


# -- compact builders for tests (same shapes as the vectors) ------------------------------------

GI = 1 << 30
CORES = 1000  # cpu amounts are millicores: 96 * CORES is 96 cores
BIG_NODE = {"cpu": 96 * CORES, "memory": 512 * GI}


def node(
    name: str = "test-node-1",
    allocatable: Mapping[str, int] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "allocatable": dict(BIG_NODE if allocatable is None else allocatable),
        "annotations": dict(annotations or {}),
        "labels": {},
    }


def metric(
    usage: Mapping[str, int] | None,
    *,
    node: str = "test-node-1",
    age: float | None = 0,
    interval: int | None = 60,
    pods: Sequence[Mapping[str, Any]] = (),
    aggregated: Sequence[Mapping[str, Any]] = (),
    system: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A ``node_metrics[]`` entry; ``usage=None`` means status.nodeMetric is nil."""
    out: dict[str, Any] = {
        "node": node,
        "update_age_seconds": age,
        "report_interval_seconds": interval,
        "node_usage": None if usage is None else dict(usage),
        "pods_usage": list(pods),
        "aggregated": list(aggregated),
    }
    if system is not None:
        out["system_usage"] = dict(system)
    return out


def pod_usage(
    name: str, usage: Mapping[str, int], priority: str | None = None, namespace: str = "default"
) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "usage": dict(usage), "priority_class": priority}


def pod(
    name: str = "test-pod",
    requests: Mapping[str, int] | None = None,
    limits: Mapping[str, int] | None = None,
    *,
    priority: int | None = None,
    node: str | None = None,
    scheduled_age: float | None = None,
    initialized_age: float | None = None,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    owner_kinds: Sequence[str] = (),
    phase: str | None = None,
) -> dict[str, Any]:
    """A vector pod; with ``node`` it is bound there, PodScheduled ``scheduled_age`` seconds ago
    (at "now" when None)."""
    out: dict[str, Any] = {
        "namespace": "default",
        "name": name,
        "requests": dict(requests or {}),
        "limits": dict(limits or {}),
        "annotations": dict(annotations or {}),
        "labels": dict(labels or {}),
        "priority": priority,
        "owner_kinds": list(owner_kinds),
        "phase": phase,
    }
    if node is not None:
        out.update(
            node=node,
            pod_scheduled_condition=scheduled_age is not None,
            scheduled_age_seconds=scheduled_age or 0,
            initialized_age_seconds=initialized_age,
        )
    return out


def vector(
    args: Mapping[str, Any] | None = None,
    *,
    nodes: Sequence[Mapping[str, Any]] | None = None,
    metrics: Sequence[Mapping[str, Any]] = (),
    existing: Sequence[Mapping[str, Any]] = (),
    incoming: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "kind": "plugin",
        "args": dict(args or {}),
        "nodes": list(nodes if nodes is not None else [node()]),
        "node_metrics": list(metrics),
        "existing_pods": list(existing),
        "pod": dict(incoming) if incoming is not None else None,
    }


def verdicts(v: Mapping[str, Any], now: str = NOW) -> dict[str, str | None]:
    """Each node's filter message (None = Success), in process."""
    _, cycle, result, _ = run_plugin(v, now)
    return {name: result.status(i).message for name, i in cycle.snapshot.index.items()}


def scores(v: Mapping[str, Any], now: str = NOW) -> dict[str, int]:
    _, cycle, _, raw = run_plugin(v, now)
    return {name: int(raw[i]) for name, i in cycle.snapshot.index.items()}
