"""Turn the compact node/pod shapes of the conformance vectors into real v1 objects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.scoring.builders import make_container, make_node, make_pod


def vector_node(node: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    manifest = make_node(str(node["name"]).lower(), node.get("allocatable") or {}, **extra)
    if node.get("images"):
        manifest["status"]["images"] = [
            {"names": list(i["names"]), "sizeBytes": i["sizeBytes"]} for i in node["images"]
        ]
    return manifest


def vector_containers(containers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        make_container(
            str(c.get("name") or f"c{i}"),
            c.get("requests"),
            c.get("limits"),
            restart_policy=c.get("restart_policy"),
            **({"image": c["image"]} if "image" in c else {}),
        )
        for i, c in enumerate(containers)
    ]


def vector_pod(pod: Mapping[str, Any], name: str | None = None, **extra: Any) -> dict[str, Any]:
    """A v1 Pod from a vector pod; unnamed existing pods get a generated name."""
    manifest = make_pod(
        name or str(pod.get("name") or "pod"),
        containers=vector_containers(pod.get("containers") or []),
        init_containers=vector_containers(pod.get("init_containers") or []),
        node_name=pod.get("node_name"),
        **extra,
    )
    if pod.get("overhead"):
        manifest["spec"]["overhead"] = {
            k: (f"{v}m" if k == "cpu" else str(v)) for k, v in pod["overhead"].items()
        }
    return manifest


def vector_cluster(vector: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Nodes plus existing pods (named existing-<i> when the Go test left them unnamed)."""
    objects = [vector_node(n) for n in vector.get("nodes", [])]
    for i, pod in enumerate(vector.get("existing_pods", [])):
        objects.append(vector_pod(pod, name=pod.get("name") or f"existing-{i}"))
    return objects


def score_only_config(plugin: str, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """A profile where ``plugin`` is the only filter-free scorer (queue sort and bind stay)."""
    star = [{"name": "*"}]
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "preFilter": {"disabled": star},
            "filter": {"disabled": star},
            "preScore": {"disabled": star, "enabled": [{"name": plugin}]},
            "score": {"disabled": star, "enabled": [{"name": plugin, "weight": 1}]},
        },
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": plugin, "args": dict(args)}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
