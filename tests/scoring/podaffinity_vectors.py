"""Turn PodTopologySpread / InterPodAffinity vectors into real v1 objects and a configuration.

The vectors mirror upstream's test builders (``st.MakeNode().Label(...)``,
``st.MakePod().Node(...).Label(...)``): nodes carry exactly the labels and taints the Go test
gives them (no implicit hostname label), pods their namespace, labels and spec fragments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.scoring.builders import evaluate, plugin_filter, plugin_score, single_profile_config

DELETION_TIME = "2026-11-20T10:00:00Z"


def vector_node(node: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node.get("taints"):
        spec["taints"] = list(node["taints"])
    if node.get("unschedulable"):
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node["name"], "labels": dict(node.get("labels") or {})},
        "spec": spec,
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def vector_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": pod["name"],
        "namespace": pod.get("namespace") or "default",
        "labels": dict(pod.get("labels") or {}),
    }
    if pod.get("terminating"):
        metadata["deletionTimestamp"] = DELETION_TIME
    if pod.get("owner_references"):
        metadata["ownerReferences"] = list(pod["owner_references"])
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    spec.update(pod.get("spec") or {})
    if pod.get("node_name"):
        spec["nodeName"] = pod["node_name"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def vector_cluster(vector: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Nodes, existing pods, then any other objects (Services, controllers, Namespaces)."""
    objects = [vector_node(n) for n in vector["nodes"]]
    objects += [vector_pod(p) for p in vector.get("existing_pods") or ()]
    objects += [dict(o) for o in vector.get("objects") or ()]
    return objects


def vector_config(vector: Mapping[str, Any]) -> dict[str, Any]:
    """Only the plugin under test, at Filter or at Score; NodeUnschedulable filters the nodes
    a score vector marks ``unschedulable`` (upstream's ``failedNodes``)."""
    plugin = vector["plugin"]
    star = [{"name": "*"}]
    plugins: dict[str, Any] = {
        point: {"disabled": star} for point in ("preFilter", "filter", "preScore", "score")
    }
    if vector["kind"] == "filter":
        plugins["preFilter"]["enabled"] = [{"name": plugin}]
        plugins["filter"]["enabled"] = [{"name": plugin}]
    else:
        plugins["filter"]["enabled"] = [{"name": "NodeUnschedulable"}]
        plugins["preScore"]["enabled"] = [{"name": plugin}]
        plugins["score"]["enabled"] = [{"name": plugin, "weight": 1}]
    config = [{"name": plugin, "args": dict(vector["args"])}] if "args" in vector else []
    return single_profile_config(plugins, config)


def load_vector(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text())
    return vector


def check_vector(path: Path, tmp_path: Path, plugin: str, reasons: Mapping[str, str]) -> None:
    """Run one vector through ``evaluate`` and check what upstream's test asserts: each node's
    filter code and reason (``reasons`` by code, unless the vector names one for the node),
    PreScore's Error or Skip, and the normalized scores."""
    vector = load_vector(path)
    decision = evaluate(
        tmp_path, vector_cluster(vector), vector_pod(vector["pod"]), config=vector_config(vector)
    )
    expect = vector["expect"]
    named = expect.get("reasons", {})
    for node, code in expect.get("codes", {}).items():
        result = plugin_filter(decision, node, plugin)
        reason = named.get(node, reasons.get(code))
        assert (result["code"], result["reason"]) == (code, reason), node
    if expect.get("prescore_status") == "Error":
        assert expect["message_contains"] in decision["error"]
        assert decision["error"].startswith(f'running PreScore plugin "{plugin}"')
    if expect.get("prescore_status") == "Skip":
        for node in decision["nodes"]:
            assert plugin_score(decision, node["name"], plugin) is None
    for node, score in expect.get("scores", {}).items():
        entry = plugin_score(decision, node, plugin)
        assert entry is not None, f"{node}: no {plugin} score"
        assert entry["normalized"] == score, (node, entry)
