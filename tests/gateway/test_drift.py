"""Drift: the cluster changed since schedboard last wrote it."""

from __future__ import annotations

from collections.abc import Callable

from policy.clusters.gateway.apply import (
    apply_configmap_key,
    apply_node_annotations,
    read_configmap,
)
from policy.clusters.gateway.connection import MERGE_PATCH, Connection
from policy.clusters.gateway.drift import Drift, annotation_drift, configmap_key_drift
from policy.clusters.gateway.readback import NODES, list_objects
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.gateway.kubeserver import ensure_namespaces

NS = "kube-system"


def configmap_drift(conn: Connection, name: str, written: str) -> Drift | None:
    """The ConfigMap's drift as a refresh sees it: read it, then compare."""
    return configmap_key_drift(read_configmap(conn, NS, name), NS, name, "config.yaml", written)


def node_drift(conn: Connection, written: dict[str, str]) -> list[Drift]:
    return annotation_drift(list_objects(conn, NODES).items, written)


def test_configmap_drift(admin: Connection, unique: Callable[[str], str]) -> None:
    ensure_namespaces(admin, [NS])
    name = unique("sched")
    written = "profiles:\n- schedulerName: default-scheduler\n"
    apply_configmap_key(admin, NS, name, "config.yaml", written)
    assert configmap_drift(admin, name, written) is None

    def edit(text: str) -> None:
        body = {"data": {"config.yaml": text}}
        path = f"/api/v1/namespaces/{NS}/configmaps/{name}"
        admin.request("PATCH", path, body=body, content_type=MERGE_PATCH)

    # The same document in another layout, with a comment: what the scheduler reads is what
    # was written (a push would not rewrite it), so it is no drift.
    edit("# tuned by hand\nprofiles: [{schedulerName: default-scheduler}]\n")
    assert configmap_drift(admin, name, written) is None
    edited = written + "  percentageOfNodesToScore: 30\n"
    edit(edited)
    drift = configmap_drift(admin, name, written)
    assert drift == Drift("ConfigMap", NS, name, "data[config.yaml]", written, edited)
    assert drift.diff.endswith("+  percentageOfNodesToScore: 30\n")
    admin.request("DELETE", f"/api/v1/namespaces/{NS}/configmaps/{name}")
    gone = configmap_drift(admin, name, written)
    assert (
        gone is not None
        and gone.actual is None
        and gone.diff.startswith("--- last written: ConfigMap/")
    )
    assert "+++ /dev/null" in gone.diff


def test_annotation_drift(admin: Connection, scratch_nodes: Callable[..., list[str]]) -> None:
    same, edited, removed = scratch_nodes(3)
    value = '{"usageThresholds":{"cpu":65}}'
    written = {same: value, edited: value, removed: value}
    apply_node_annotations(admin, written, set())
    assert node_drift(admin, written) == []

    hand = '{"usageThresholds":{"cpu":80}}'
    patch = {"metadata": {"annotations": {KEY: hand}}}
    admin.request("PATCH", f"/api/v1/nodes/{edited}", body=patch, content_type=MERGE_PATCH)
    patch = {"metadata": {"annotations": {KEY: None}}}
    admin.request("PATCH", f"/api/v1/nodes/{removed}", body=patch, content_type=MERGE_PATCH)

    drifts = {d.name: d for d in node_drift(admin, written)}
    assert set(drifts) == {edited, removed}
    assert (drifts[edited].expected, drifts[edited].actual) == (value, hand)
    assert '-    "cpu": 65\n+    "cpu": 80\n' in drifts[edited].diff
    assert (
        drifts[removed].actual is None
        and drifts[removed].as_dict()["field"] == f"metadata.annotations[{KEY}]"
    )
