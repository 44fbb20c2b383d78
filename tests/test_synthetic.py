"""The synthetic cluster looks like `kubectl get -o json` output and is internally consistent."""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

import pytest

from scoring.quantity import resource_amount
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture(scope="module")
def cluster() -> list[dict[str, Any]]:
    return generate_cluster(now=NOW)


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj["kind"] == kind]


def age_seconds(stamp: str) -> float:
    return (NOW - datetime.fromisoformat(stamp)).total_seconds()


def test_counts_and_kinds(cluster: list[dict[str, Any]]) -> None:
    kinds = Counter((obj["apiVersion"], obj["kind"]) for obj in cluster)
    assert kinds == {
        ("v1", "Node"): 60,
        ("v1", "Pod"): 60 * 8 + 12,
        ("slo.koordinator.sh/v1alpha1", "NodeMetric"): 59,
        ("topology.node.k8s.io/v1alpha2", "NodeResourceTopology"): 4,
    }
    pods = of_kind(cluster, "Pod")
    assert sum(1 for pod in pods if pod["spec"].get("nodeName")) == 480


def test_parameters_are_honoured() -> None:
    objects = generate_cluster(nodes=7, pods_per_node=2.5, pending_pods=3, nrt_nodes=2, now=NOW)
    kinds = Counter(obj["kind"] for obj in objects)
    assert kinds == {"Node": 7, "Pod": 18 + 3, "NodeMetric": 6, "NodeResourceTopology": 2}


def test_empty_and_invalid_arguments() -> None:
    assert generate_cluster(nodes=0, pending_pods=0, nrt_nodes=0, now=NOW) == []
    assert (
        Counter(o["kind"] for o in generate_cluster(nodes=2, nrt_nodes=3, now=NOW))[
            "NodeResourceTopology"
        ]
        == 2
    )
    with pytest.raises(ValueError, match=">= 0"):
        generate_cluster(nodes=-1, now=NOW)
    with pytest.raises(ValueError, match="pod capacity"):
        generate_cluster(nodes=1, pods_per_node=500, now=NOW)


def test_deterministic_for_seed_and_now(cluster: list[dict[str, Any]]) -> None:
    assert generate_cluster(now=NOW) == cluster
    assert generate_cluster(now=NOW, seed=8) != cluster


def test_names_are_unique(cluster: list[dict[str, Any]]) -> None:
    for kind in ("Node", "NodeMetric", "NodeResourceTopology"):
        names = [obj["metadata"]["name"] for obj in of_kind(cluster, kind)]
        assert len(names) == len(set(names)), kind
    pod_keys = [
        (p["metadata"]["namespace"], p["metadata"]["name"]) for p in of_kind(cluster, "Pod")
    ]
    assert len(pod_keys) == len(set(pod_keys))
    uids = [obj["metadata"]["uid"] for obj in cluster if "uid" in obj["metadata"]]
    assert len(uids) == len(set(uids))


def test_nodes_look_real(cluster: list[dict[str, Any]]) -> None:
    nodes = of_kind(cluster, "Node")
    cores = {int(node["status"]["capacity"]["cpu"]) for node in nodes}
    assert cores <= {4, 8, 16, 32, 64} and len(cores) >= 4
    assert {n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes} == {
        "eu-west-1a",
        "eu-west-1b",
        "eu-west-1c",
    }
    for node in nodes:
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == node["metadata"]["name"]
        assert {"kubernetes.io/os", "node.kubernetes.io/instance-type", "pool"} <= labels.keys()
        for field in ("cpu", "memory", "pods", "ephemeral-storage"):
            allocatable = resource_amount(field, node["status"]["allocatable"][field])
            assert 0 < allocatable <= resource_amount(field, node["status"]["capacity"][field])
    gpu_nodes = [n for n in nodes if "nvidia.com/gpu" in n["status"]["allocatable"]]
    assert gpu_nodes
    for node in gpu_nodes:
        assert {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"} in node["spec"][
            "taints"
        ]
    assert 1 <= sum(1 for n in nodes if n["spec"].get("unschedulable")) <= 2


def test_some_nodes_carry_koordinator_thresholds(cluster: list[dict[str, Any]]) -> None:
    annotated = [
        json.loads(node["metadata"]["annotations"]["scheduling.koordinator.sh/usage-thresholds"])
        for node in of_kind(cluster, "Node")
        if "scheduling.koordinator.sh/usage-thresholds" in node["metadata"]["annotations"]
    ]
    assert 1 <= len(annotated) <= 6
    for thresholds in annotated:
        assert set(thresholds["usageThresholds"]) == {"cpu", "memory"}


def test_no_node_is_overcommitted_by_requests() -> None:
    objects = generate_cluster(nodes=300, pods_per_node=30, now=NOW, seed=11)
    allocatable = {
        node["metadata"]["name"]: node["status"]["allocatable"] for node in of_kind(objects, "Node")
    }
    requested: dict[str, Counter[str]] = defaultdict(Counter)
    pods_on: Counter[str] = Counter()
    for pod in of_kind(objects, "Pod"):
        node_name = pod["spec"].get("nodeName")
        if not node_name:
            continue
        pods_on[node_name] += 1
        for container in pod["spec"]["containers"]:
            for resource, quantity in container["resources"]["requests"].items():
                requested[node_name][resource] += resource_amount(resource, quantity)
    for name, totals in requested.items():
        for resource, total in totals.items():
            assert total <= resource_amount(resource, allocatable[name][resource]), (name, resource)
        assert pods_on[name] <= int(allocatable[name]["pods"])


def test_bound_pods(cluster: list[dict[str, Any]]) -> None:
    bound = [pod for pod in of_kind(cluster, "Pod") if pod["spec"].get("nodeName")]
    owner_kinds = Counter()
    for pod in bound:
        assert pod["status"]["phase"] == "Running"
        scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        assert scheduled["status"] == "True" and RFC3339.match(scheduled["lastTransitionTime"])
        (owner,) = pod["metadata"]["ownerReferences"]
        assert owner["controller"] is True
        owner_kinds[owner["kind"]] += 1
        for container in pod["spec"]["containers"]:
            assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
            assert {"cpu", "memory"} <= container["resources"]["limits"].keys()
    assert set(owner_kinds) == {"ReplicaSet", "StatefulSet", "DaemonSet"}
    batch = [p for p in bound if p["metadata"]["labels"].get("koordinator.sh/priority-class")]
    assert 0 < len(batch) < len(bound) / 2
    assert all(
        p["metadata"]["labels"]["koordinator.sh/priority-class"] == "koord-batch" for p in batch
    )
    assert len({pod["metadata"]["namespace"] for pod in bound}) >= 4


def test_pending_pods(cluster: list[dict[str, Any]]) -> None:
    pending = [pod for pod in of_kind(cluster, "Pod") if not pod["spec"].get("nodeName")]
    assert len(pending) == 12
    assert all(pod["status"]["phase"] == "Pending" for pod in pending)
    schedulers = Counter(pod["spec"]["schedulerName"] for pod in pending)
    assert schedulers["default-scheduler"] > schedulers["batch-scheduler"] > 0
    largest = max(
        resource_amount("cpu", n["status"]["allocatable"]["cpu"]) for n in of_kind(cluster, "Node")
    )
    too_big = [
        pod
        for pod in pending
        if sum(
            resource_amount("cpu", c["resources"]["requests"]["cpu"])
            for c in pod["spec"]["containers"]
        )
        > largest
    ]
    assert 1 <= len(too_big) < len(pending)


def test_node_metrics(cluster: list[dict[str, Any]]) -> None:
    metrics = of_kind(cluster, "NodeMetric")
    node_names = {node["metadata"]["name"] for node in of_kind(cluster, "Node")}
    assert len(node_names - {m["metadata"]["name"] for m in metrics}) == 1
    ages = [age_seconds(m["status"]["updateTime"]) for m in metrics]
    assert 2 <= sum(1 for age in ages if age > 180) <= 3
    assert all(age >= 0 for age in ages)
    allocatable = {
        n["metadata"]["name"]: n["status"]["allocatable"] for n in of_kind(cluster, "Node")
    }
    hot = 0
    for metric in metrics:
        assert metric["spec"]["metricCollectPolicy"] == {
            "aggregateDurationSeconds": 300,
            "reportIntervalSeconds": 60,
        }
        usage = metric["status"]["nodeMetric"]["nodeUsage"]["resources"]
        cpu = resource_amount("cpu", usage["cpu"])
        node_cpu = resource_amount("cpu", allocatable[metric["metadata"]["name"]]["cpu"])
        hot += cpu > 0.65 * node_cpu
        (aggregated,) = metric["status"]["nodeMetric"]["aggregatedNodeUsages"]
        assert aggregated["duration"] == "5m0s"
        p = {
            k: resource_amount("cpu", v["resources"]["cpu"]) for k, v in aggregated["usage"].items()
        }
        assert p["p50"] <= p["p90"] <= p["p95"] <= p["p99"]
        pods_cpu = sum(
            resource_amount("cpu", pm["podUsage"]["resources"]["cpu"])
            for pm in metric["status"]["podsMetric"]
        )
        assert pods_cpu <= cpu
        assert {pm["priority"] for pm in metric["status"]["podsMetric"]} <= {
            "koord-prod",
            "koord-batch",
        }
    assert hot >= 2


def test_pods_metric_lists_the_pods_on_the_node(cluster: list[dict[str, Any]]) -> None:
    on_node: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for pod in of_kind(cluster, "Pod"):
        if pod["spec"].get("nodeName"):
            on_node[pod["spec"]["nodeName"]].add(
                (pod["metadata"]["namespace"], pod["metadata"]["name"])
            )
    for metric in of_kind(cluster, "NodeMetric"):
        listed = {(pm["namespace"], pm["name"]) for pm in metric["status"]["podsMetric"]}
        assert listed == on_node[metric["metadata"]["name"]]


def test_node_resource_topologies(cluster: list[dict[str, Any]]) -> None:
    nodes = {n["metadata"]["name"]: n for n in of_kind(cluster, "Node")}
    for topology in of_kind(cluster, "NodeResourceTopology"):
        node = nodes[topology["metadata"]["name"]]
        assert "nvidia.com/gpu" in node["status"]["allocatable"]
        assert {"name": "topologyManagerPolicy", "value": "single-numa-node"} in topology[
            "attributes"
        ]
        assert [zone["name"] for zone in topology["zones"]] == ["node-0", "node-1"]
        for zone in topology["zones"]:
            assert zone["type"] == "Node"
            assert {r["name"] for r in zone["resources"]} == {"cpu", "memory", "nvidia.com/gpu"}
            for resource in zone["resources"]:
                amounts = [
                    resource_amount(resource["name"], resource[key])
                    for key in ("capacity", "allocatable", "available")
                ]
                assert amounts[0] >= amounts[1] >= amounts[2] >= 0
            assert {c["name"] for c in zone["costs"]} == {"node-0", "node-1"}


def test_timestamps_are_rfc3339_utc(cluster: list[dict[str, Any]]) -> None:
    for obj in cluster:
        stamp = obj["metadata"].get("creationTimestamp")
        if stamp is not None:
            assert RFC3339.match(stamp), stamp
            assert age_seconds(stamp) >= 0


@pytest.mark.benchmark
def test_large_cluster_is_fast() -> None:
    started = time.perf_counter()
    objects = generate_cluster(nodes=5000, pods_per_node=10, now=NOW)
    elapsed = time.perf_counter() - started
    assert sum(1 for obj in objects if obj["kind"] == "Pod") == 50_000 + 12
    assert elapsed < 10, f"5,000 nodes took {elapsed:.1f}s"
