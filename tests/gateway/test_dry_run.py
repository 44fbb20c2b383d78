"""The dry-run is the contract: applying a confirmed plan changes exactly the fields it
listed, to exactly the values it showed, and nothing else in any object."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable

from policy.clusters.gateway.apply import (
    SloTarget,
    apply_configmap_key,
    apply_node_annotations,
    apply_slo_colocation,
    plan_configmap_key,
    plan_node_annotations,
    plan_slo_colocation,
)
from policy.clusters.gateway.changes import Change
from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.desired import collect_policy, usage_thresholds_annotation
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.gateway.kubeserver import Json, create, ensure_namespaces

VOLATILE = ("resourceVersion", "managedFields")


def stable(obj: Json) -> Json:
    """The object without what every write changes (its version, field managers)."""
    obj = copy.deepcopy(obj)
    for key in VOLATILE:
        obj["metadata"].pop(key, None)
    return obj


def with_change(obj: Json, change: Change) -> Json:
    """``obj`` as the change says it will be: ``data[key]`` or ``metadata.annotations[key]``."""
    match = re.fullmatch(r"(.+)\[(.+)\]", change.field)
    assert match, change.field
    section: Json = obj
    for part in match.group(1).split("."):
        section = section.setdefault(part, {})
    if change.after is None:
        section.pop(match.group(2))
    else:
        section[match.group(2)] = change.after
    return obj


def test_apply_writes_exactly_the_dry_run(
    admin: Connection, scratch_nodes: Callable[..., list[str]], unique: Callable[[str], str]
) -> None:
    ensure_namespaces(admin, ["kube-system", "koordinator-system"])
    sched = unique("sched")
    slo = SloTarget(namespace="koordinator-system", name=unique("slo"))
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": sched, "namespace": "kube-system", "labels": {"a": "b"}},
            "data": {"config.yaml": "old: true\n", "other": "x"},
        },
    )
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": slo.name, "namespace": slo.namespace},
            "data": {slo.key: json.dumps({"enable": True, "x": 1}), "y": "z"},
        },
    )
    owned_node, new_node, foreign_node = scratch_nodes(3, {"keep": "me"})
    apply_node_annotations(admin, {owned_node: "{}"}, set())
    patch = {"metadata": {"annotations": {KEY: '{"mine": "not yours"}'}}}
    admin.request(
        "PATCH",
        f"/api/v1/nodes/{foreign_node}",
        body=patch,
        content_type="application/merge-patch+json",
    )

    thresholds = usage_thresholds_annotation({"usageThresholds": {"cpu": 70}})
    desired_nodes = {new_node: thresholds, foreign_node: thresholds}
    general = {  # a nodeConfigs entry as a collect policy renders it
        "name": "sb-general",
        "nodeSelector": {"matchLabels": {"pool": "general"}},
        "metricReportIntervalSeconds": 20,
    }
    plans = [
        plan_configmap_key(admin, "kube-system", sched, "config.yaml", "new: true\n"),
        plan_node_annotations(admin, desired_nodes, {owned_node}),
        plan_slo_colocation(admin, collect_policy(30, 300), [general], set(), target=slo),
    ]
    refs = {
        f"/api/v1/namespaces/kube-system/configmaps/{sched}",
        f"/api/v1/namespaces/{slo.namespace}/configmaps/{slo.name}",
        *(f"/api/v1/nodes/{name}" for name in (owned_node, new_node, foreign_node)),
    }
    before = {ref: stable(admin.request("GET", ref)) for ref in refs}

    results = [
        apply_configmap_key(
            admin, "kube-system", sched, "config.yaml", "new: true\n", plan=plans[0]
        ),
        apply_node_annotations(admin, desired_nodes, {owned_node}, plan=plans[1]),
        apply_slo_colocation(
            admin, collect_policy(30, 300), [general], set(), target=slo, plan=plans[2]
        ),
    ]

    assert [r.applied for r in results] == [p.changes for p in plans]
    assert sorted((c.object_ref, c.action) for p in plans for c in p) == sorted(
        [
            (f"ConfigMap/kube-system/{sched}", "update"),
            (f"Node/{owned_node}", "remove"),
            (f"Node/{new_node}", "add"),
            (f"ConfigMap/{slo.namespace}/{slo.name}", "update"),
        ]
    )
    expected = copy.deepcopy(before)
    for plan in plans:
        for change in plan:
            path = (
                f"/api/v1/nodes/{change.name}"
                if change.kind == "Node"
                else f"/api/v1/namespaces/{change.namespace}/configmaps/{change.name}"
            )
            with_change(expected[path], change)
    after = {ref: stable(admin.request("GET", ref)) for ref in refs}
    assert after == expected
