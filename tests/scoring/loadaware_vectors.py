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
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from scoring.framework import Cycle, FilterResult
from scoring.objects import parse_pod
from scoring.plugins.loadaware import LoadAwareScheduling
from scoring.plugins.loadaware.args import default_args
from scoring.plugins.loadaware.duration import SECOND, format_duration
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


def at(now: str, seconds: float) -> datetime:
    return parse_time(now) + timedelta(seconds=seconds)
