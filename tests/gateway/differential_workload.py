"""Nodes and pods for the differential test (tests/gateway/test_differential.py).

Deterministic variety: three zones and three pools (general, large, gpu with an extended
resource), NoSchedule and PreferNoSchedule taints; pods with and without requests, init
containers larger than their containers, extended resources, node selectors, required and
preferred node affinity, tolerations, host ports, topology spread constraints (DoNotSchedule),
required pod anti-affinity (per node, per zone) and affinity, and pods no node can take.
Profiles alternate between spreading (LeastAllocated) and packing (MostAllocated) on every
node.
"""

from __future__ import annotations

import random
from typing import Any

Json = dict[str, Any]

NAMESPACE = "differential"
LEAST = "differential-least"
MOST = "differential-most"
ZONES = ("z-a", "z-b", "z-c")
ZONE = "topology.kubernetes.io/zone"
GPU = "example.com/gpu"
POOLS: dict[str, Json] = {
    "general": {"cpu": "4", "memory": "16Gi", "pods": "110"},
    "large": {"cpu": "16", "memory": "64Gi", "pods": "110"},
    "gpu": {"cpu": "8", "memory": "32Gi", "pods": "110", GPU: "4"},
    # Two request-less pods (200m / 400Mi each at the non-zero defaults) overcommit its cpu in
    # scoring: 1.20's MostAllocated and BalancedAllocation then score it 0, 1.35's would not.
    "small": {"cpu": "300m", "memory": "1Gi", "pods": "110"},
}
POD_COUNT = 120


def differential_nodes(prefix: str) -> list[Json]:
    """26 Ready nodes: 8 per zone across the pools, plus 2 small ones (zones a and b); 2 dedicated
    (NoSchedule), 2 spot (PreferNoSchedule)."""
    nodes = []
    pools = ["general"] * 4 + ["large"] * 2 + ["gpu"] * 2 + ["small"]
    for index in range(26):
        zone, pool = ZONES[index % 3], pools[index // 3]
        name = f"{prefix}-{index:02d}"
        taints = []
        if index in (1, 2):
            taints.append({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
        if index in (4, 5):
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        labels = {
            "kubernetes.io/hostname": name,
            ZONE: zone,
            "pool": pool,
        }
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {"taints": taints} if taints else {},
                "status": {
                    "capacity": dict(POOLS[pool]),
                    "allocatable": dict(POOLS[pool]),
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
    return nodes


def _container(name: str, requests: Json | None, **extra: Any) -> Json:
    container: Json = {"name": name, "image": "registry.example/app:1"}
    if requests:
        container["resources"] = {"requests": requests}
    container.update(extra)
    return container


def _requests(rng: random.Random) -> Json:
    return {
        "cpu": f"{rng.choice([50, 100, 250, 500, 1000, 1500])}m",
        "memory": f"{rng.choice([64, 128, 256, 512, 1024, 2048])}Mi",
    }


def _variant(kind: int, rng: random.Random, nodes: list[str]) -> Json:
    """The pod spec of variant ``kind`` (the profile is set by the caller)."""
    requests = _requests(rng)
    spec: Json = {"containers": [_container("app", requests)]}
    if kind == 0:  # no requests: scored at kube-scheduler's non-zero defaults
        spec["containers"] = [_container("app", None), _container("side", None)]
    elif kind == 1:  # cpu only
        spec["containers"] = [_container("app", {"cpu": requests["cpu"]})]
    elif kind == 2:  # an init container asking more than the app
        spec["initContainers"] = [_container("init", {"cpu": "2", "memory": "3Gi"})]
    elif kind == 3:
        spec["containers"][0]["resources"]["requests"][GPU] = "1"
        spec["containers"][0]["resources"]["limits"] = {GPU: "1"}
    elif kind == 4:
        spec["nodeSelector"] = {"pool": "large"}
    elif kind == 5:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE, "operator": "In", "values": ["z-a", "z-b"]},
                                {"key": "pool", "operator": "NotIn", "values": ["gpu"]},
                            ]
                        }
                    ]
                }
            }
        }
    elif kind == 6:
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 50,
                        "preference": {
                            "matchExpressions": [
                                {"key": "pool", "operator": "In", "values": ["general"]}
                            ]
                        },
                    },
                    {
                        "weight": 20,
                        "preference": {
                            "matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z-c"]}]
                        },
                    },
                ]
            }
        }
    elif kind == 7:
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
        ]
    elif kind == 8:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists"}]
    elif kind == 9:
        spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
    elif kind == 10:  # larger than any node
        spec["containers"] = [_container("app", {"cpu": "32", "memory": "1Gi"})]
    elif kind == 11:  # no node has this pool
        spec["nodeSelector"] = {"pool": "archive"}
    elif kind == 12:  # fits only where most of a node is free
        spec["containers"] = [_container("app", {"cpu": "3", "memory": "12Gi"})]
    elif kind == 13:  # spread evenly over zones, or not at all
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "variant-13"}},
            }
        ]
    elif kind in (14, 15):  # one per node, then one per zone
        key = "kubernetes.io/hostname" if kind == 14 else ZONE
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": f"variant-{kind}"}},
                        "topologyKey": key,
                    }
                ]
            }
        }
    elif kind == 16:  # beside the large-pool pods, in their zone
        spec["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "variant-4"}}, "topologyKey": ZONE}
                ]
            }
        }
    return spec


VARIANTS = 17


def differential_pods(nodes: list[str], count: int = POD_COUNT, seed: int = 20) -> list[Json]:
    """``count`` pods cycling through every variant, alternating profiles."""
    rng = random.Random(seed)
    pods = []
    for index in range(count):
        kind = index % VARIANTS
        spec = _variant(kind, rng, nodes)
        profile = LEAST if (index // VARIANTS) % 2 == 0 else MOST
        spec["schedulerName"] = profile
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"pod-{index:03d}-v{kind}",
                    "namespace": NAMESPACE,
                    "labels": {"app": f"variant-{kind}"},
                },
                "spec": spec,
            }
        )
    return pods
