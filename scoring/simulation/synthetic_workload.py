"""Synthetic Deployments to place on a :func:`scoring.synthetic.generate_cluster` cluster.

A mix like a multi-team cluster's rollout: requests from 100m / 128Mi to 2 cores / 4Gi, about a
third Guaranteed, some Koordinator batch pods, zone selectors, preferred pools, custom load
estimation, and a few GPU deployments (tolerating the GPU taint, Guaranteed, so the NUMA plugin
has work). The output depends only on the arguments.
"""

from __future__ import annotations

import json
import random
from typing import Any

from scoring.synthetic import APPS, TEAMS, ZONES

Obj = dict[str, Any]

_CPU = ("100m", "250m", "500m", "1", "2")
_MEMORY = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi")
_BURST = {"100m": "200m", "250m": "500m", "500m": "1", "1": "2", "2": "4"}
_MEMORY_BURST = {
    "128Mi": "192Mi",
    "256Mi": "384Mi",
    "512Mi": "768Mi",
    "1Gi": "1536Mi",
    "2Gi": "3Gi",
    "4Gi": "6Gi",
}
_GPU_EVERY = 20  # one deployment in 20 asks for a GPU


def generate_deployments(*, count: int = 100, replicas: int = 100, seed: int = 1) -> list[Obj]:
    """``count`` apps/v1 Deployments of ``replicas`` pods each."""
    rng = random.Random(seed)
    return [_deployment(rng, index, replicas) for index in range(count)]


def _deployment(rng: random.Random, index: int, replicas: int) -> Obj:
    team = TEAMS[index % len(TEAMS)]
    app = f"{APPS[index % len(APPS)]}-{index:03d}"
    labels = {"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": team}
    annotations: dict[str, str] = {}
    gpu = index % _GPU_EVERY == _GPU_EVERY - 1
    guaranteed = gpu or rng.random() < 0.3
    cpu, memory = rng.choice(_CPU), rng.choice(_MEMORY)
    resources: Obj = {"requests": {"cpu": cpu, "memory": memory}}
    resources["limits"] = (
        dict(resources["requests"])
        if guaranteed
        else {"cpu": _BURST[cpu], "memory": _MEMORY_BURST[memory]}
    )
    spec: Obj = {"containers": [{"name": "app", "image": f"registry.example.com/{app}:2.0"}]}
    spec["containers"][0]["resources"] = resources
    if gpu:
        resources["requests"]["nvidia.com/gpu"] = resources["limits"]["nvidia.com/gpu"] = "1"
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ]
    draw = rng.random()
    if not gpu and draw < 0.1:
        labels["koordinator.sh/priority-class"] = "koord-batch"
        spec["priority"] = 5500
    elif draw < 0.3:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": ZONES[index % len(ZONES)]}
    elif draw < 0.45:
        spec["affinity"] = _prefer_pool("memory" if index % 2 else "general")
    if rng.random() < 0.1:
        factors = {"cpu": 60 + 10 * (index % 4), "memory": 80}
        annotations["scheduling.koordinator.sh/load-estimated-scaling-factors"] = json.dumps(
            factors
        )
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": app, "namespace": team, "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": app}},
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": spec,
            },
        },
    }


def _prefer_pool(pool: str) -> Obj:
    term = {"matchExpressions": [{"key": "pool", "operator": "In", "values": [pool]}]}
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": term}]
        }
    }
