"""Refreshing a snapshot in place (``Snapshot.apply_changes``) answers as a rebuild does.

A property test draws random refreshes (pods, nodes, NodeMetrics, NRTs and cluster objects
added, changed and deleted) against a small synthetic cluster whose plugin states are already
built, applies them to the snapshot, and compares every probe pod's decision with the one on a
snapshot built from the refreshed objects.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.engine import EXTENDED_PROFILE
from scoring.config import load_configuration
from scoring.decision import Decision
from scoring.engine import Engine
from scoring.objects import Pod, parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
Obj = dict[str, Any]
Ref = tuple[str, str, str]

FRAMEWORK = Engine(load_configuration(copy.deepcopy(EXTENDED_PROFILE))).frameworks[
    "default-scheduler"
]
BASE = generate_cluster(nodes=10, pods_per_node=3, pending_pods=4, nrt_nodes=3, seed=3, now=NOW)
EXTRA_OBJECTS: list[Obj] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "payments", "labels": {}}},
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "api", "namespace": "payments"},
        "spec": {"selector": {"app": "api"}},
    },
]


def ref(obj: Mapping[str, Any]) -> Ref:
    meta = obj.get("metadata") or {}
    return (str(obj["kind"]), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def replay(objects: Iterable[Obj], put: Sequence[Obj], delete: Sequence[Ref]) -> list[Obj]:
    """The objects after a refresh, ordered as a stored snapshot chain replays them."""
    index = {ref(obj): obj for obj in objects}
    for gone in delete:
        index.pop(gone, None)
    for obj in put:
        index[ref(obj)] = obj
    return list(index.values())


def probe_pods() -> list[Pod]:
    """The cluster's pending pods plus pods that read spread, affinity, ports and NUMA state."""
    pending = [parse_pod(o) for o in BASE if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    spread = copy.deepcopy(next(o for o in BASE if o["kind"] == "Pod"))
    spread["metadata"] = {"name": "probe-spread", "namespace": "payments", "labels": {"app": "api"}}
    spread["spec"].pop("nodeName", None)
    spread["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "api"}},
        }
    ]
    spread["spec"]["affinity"] = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "api"}},
                    },
                }
            ]
        }
    }
    spread["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spread.pop("status", None)
    return [*pending, parse_pod(spread)]


def outcome(decision: Decision, snapshot: Snapshot) -> Any:
    """Everything a decision says per node, by node name."""
    names = snapshot.node_names
    filters = {
        f.plugin: [(names[i], str(f.result.status(i))) for i in range(len(names))]
        for f in decision.filters
    }
    scores = {
        s.plugin: sorted(
            zip(
                [names[i] for i in decision.feasible.tolist()],
                s.raw.tolist(),
                s.normalized.tolist(),
                strict=True,
            )
        )
        for s in decision.scores
    }
    return filters, scores, decision.error, decision.selected_node


def decisions(snapshot: Snapshot) -> list[Any]:
    return [outcome(decision, snapshot) for decision in evaluated(snapshot)]


def evaluated(snapshot: Snapshot) -> list[Decision]:
    return [FRAMEWORK.evaluate(pod, snapshot, NOW) for pod in probe_pods()]


def names_in_order(decision: Decision, snapshot: Snapshot) -> list[str]:
    """The explanation's node order (ranked, then the rest by name), by name."""
    return [snapshot.node_names[i] for i in decision.node_order()]


# -- random refreshes ---------------------------------------------------------------------------


def _pods(objects: list[Obj]) -> list[Obj]:
    return [o for o in objects if o["kind"] == "Pod"]


def _of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


@st.composite
def refresh(draw: st.DrawFn, objects: list[Obj]) -> tuple[list[Obj], list[Ref]]:
    """One refresh: a few random changes to ``objects`` (puts and deletes)."""
    put: dict[Ref, Obj] = {}
    delete: list[Ref] = []
    nodes = _of_kind(objects, "Node")
    node_names = [n["metadata"]["name"] for n in nodes] + ["node-new-0", "node-new-1"]
    for _ in range(draw(st.integers(1, 6))):
        action = draw(
            st.sampled_from(
                [
                    "move-pod",
                    "resize-pod",
                    "delete-pod",
                    "add-pod",
                    "finish-pod",
                    "label-node",
                    "resize-node",
                    "taint-node",
                    "add-node",
                    "delete-node",
                    "metric",
                    "delete-metric",
                    "delete-topology",
                    "namespace",
                    "delete-service",
                ]
            )
        )
        obj = _change(draw, action, objects, nodes, node_names, delete)
        if obj is not None:
            put[ref(obj)] = obj
    return list(put.values()), delete


def _change(
    draw: st.DrawFn,
    action: str,
    objects: list[Obj],
    nodes: list[Obj],
    node_names: list[str],
    delete: list[Ref],
) -> Obj | None:
    pods = _pods(objects)
    if action in ("move-pod", "resize-pod", "finish-pod", "add-pod") and pods:
        pod = copy.deepcopy(draw(st.sampled_from(pods)))
        if action == "add-pod":
            pod["metadata"]["name"] += f"-copy{draw(st.integers(0, 3))}"
            pod["metadata"]["uid"] = pod["metadata"]["name"]
        if action in ("move-pod", "add-pod"):
            target = draw(st.sampled_from(["", *node_names]))
            pod["spec"]["nodeName"] = target
            if not target:
                pod["spec"].pop("nodeName")
        elif action == "resize-pod":
            resources = pod["spec"]["containers"][0].setdefault("resources", {})
            resources["requests"] = {"cpu": f"{draw(st.integers(0, 4000))}m", "memory": "1Gi"}
        else:
            pod.setdefault("status", {})["phase"] = "Succeeded"
        return pod
    if action == "delete-pod" and pods:
        delete.append(ref(draw(st.sampled_from(pods))))
    elif action in ("label-node", "resize-node", "taint-node", "add-node") and nodes:
        node = copy.deepcopy(draw(st.sampled_from(nodes)))
        meta = node["metadata"]
        if action == "label-node":
            meta.setdefault("labels", {})["topology.kubernetes.io/zone"] = draw(
                st.sampled_from(["eu-west-1a", "eu-west-1b", "elsewhere"])
            )
        elif action == "resize-node":
            node["status"]["allocatable"]["cpu"] = f"{draw(st.integers(1, 64))}"
            node["status"]["allocatable"]["example.com/dongle"] = "2"
        elif action == "taint-node":
            node["spec"]["unschedulable"] = draw(st.booleans())
            node["spec"]["taints"] = draw(
                st.sampled_from(
                    [[], [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]]
                )
            )
        else:
            meta["name"] = draw(st.sampled_from(node_names[-2:]))
            meta.setdefault("labels", {})["kubernetes.io/hostname"] = meta["name"]
        return node
    elif action == "delete-node" and nodes:
        delete.append(ref(draw(st.sampled_from(nodes))))
    elif action in ("metric", "delete-metric"):
        metrics = _of_kind(objects, "NodeMetric")
        if metrics:
            metric = copy.deepcopy(draw(st.sampled_from(metrics)))
            if action == "delete-metric":
                delete.append(ref(metric))
                return None
            metric["metadata"]["name"] = draw(st.sampled_from(node_names))
            usage = metric["status"]["nodeMetric"]["nodeUsage"]["resources"]
            usage["cpu"] = f"{draw(st.integers(0, 64000))}m"
            return metric
    elif action == "delete-topology":
        topologies = _of_kind(objects, "NodeResourceTopology")
        if topologies:
            delete.append(ref(draw(st.sampled_from(topologies))))
    elif action == "namespace":
        namespace = copy.deepcopy(EXTRA_OBJECTS[0])
        namespace["metadata"]["labels"] = {"tier": draw(st.sampled_from(["gold", "silver"]))}
        return namespace
    elif action == "delete-service":
        delete.append(ref(EXTRA_OBJECTS[1]))
    return None


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_refreshed_snapshot_decides_as_a_rebuilt_one(data: st.DataObject) -> None:
    objects = [*BASE, *copy.deepcopy(EXTRA_OBJECTS)]
    snapshot = Snapshot.from_objects(objects)
    decisions(snapshot)  # every plugin state is built before the refreshes
    for _ in range(data.draw(st.integers(1, 3))):
        put, delete = data.draw(refresh(objects))
        snapshot.apply_changes(put, delete)
        objects = replay(objects, put, delete)
        rebuilt = Snapshot.from_objects(objects)
        assert snapshot.node_names == rebuilt.node_names
        assert snapshot.by_name().tolist() == rebuilt.by_name().tolist()
        assert decisions(snapshot) == decisions(rebuilt)
        assert [names_in_order(d, snapshot) for d in evaluated(snapshot)] == [
            names_in_order(d, rebuilt) for d in evaluated(rebuilt)
        ]
        assert_same_columns(snapshot, rebuilt)


def assert_same_columns(snapshot: Snapshot, rebuilt: Snapshot) -> None:
    """Requests, allocatable and pods per node agree, resource by resource."""
    for name in set(snapshot.resources) | set(rebuilt.resources):
        for attribute in ("requested", "allocatable"):
            mine, theirs = (
                getattr(s, attribute)[:, s.resource_index[name]]
                if name in s.resource_index
                else np.zeros(len(s), np.int64)
                for s in (snapshot, rebuilt)
            )
            assert mine.tolist() == theirs.tolist(), (attribute, name)
    assert snapshot.non_zero_requested.tolist() == rebuilt.non_zero_requested.tolist()
    for mine, theirs in zip(snapshot.pods_on_node, rebuilt.pods_on_node, strict=True):
        assert sorted(p.key for p in mine) == sorted(p.key for p in theirs)
    assert sorted(p.key for p in snapshot.pending) == sorted(p.key for p in rebuilt.pending)
    assert sorted(p.key for p in snapshot.unbound) == sorted(p.key for p in rebuilt.unbound)


def test_a_deleted_pod_leaves_its_node() -> None:
    objects = list(BASE)
    snapshot = Snapshot.from_objects(objects)
    pod = next(o for o in _pods(objects) if o["spec"].get("nodeName"))
    home = snapshot.index[pod["spec"]["nodeName"]]
    before = int(snapshot.requested[home, snapshot.resource_index["pods"]])
    snapshot.apply_changes(delete=[ref(pod)])
    assert int(snapshot.requested[home, snapshot.resource_index["pods"]]) == before - 1
    assert pod["metadata"]["name"] not in {p.name for p in snapshot.pods_on_node[home]}


@pytest.mark.parametrize("kind", ["Deployment", "ConfigMap"])
def test_kinds_not_read_are_reported(kind: str) -> None:
    snapshot = Snapshot.from_objects(list(BASE))
    warnings: list[str] = []
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "namespace": "a"}}
    snapshot.apply_changes([obj], warn=warnings.append)
    assert warnings == [f"warning: ignoring v1 {kind} 'x': kind not read"]
