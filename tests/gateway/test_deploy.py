"""The manifests under deploy/: valid for a real API server, and the RBAC they grant is
enough for everything the gateway does, and nothing more."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from policy.clusters.gateway.apply import (
    SloTarget,
    apply_configmap_key,
    apply_node_annotations,
    apply_slo_colocation,
    read_configmap,
)
from policy.clusters.gateway.connection import Connection, ConnectionSpec, connect
from policy.clusters.gateway.desired import collect_policy
from policy.clusters.gateway.drift import annotation_drift, configmap_key_drift
from policy.clusters.gateway.errors import PermanentError
from policy.clusters.gateway.informer import ClusterInformer
from policy.clusters.gateway.readback import NODES, list_objects, watch
from tests.gateway.kubeserver import ROOT, Json, KubeServer, create, manifests

DEPLOY = ROOT / "deploy"
KOORD = "koordinator-system"


@pytest.fixture
def service_account(kube: KubeServer, rbac: None) -> Connection:
    return kube.connect("schedboard")


def test_app_manifests_pass_server_side_validation(admin: Connection, rbac: None) -> None:
    """Deployments, Service and ConfigMap, checked by the API server without being stored
    (the namespace, RBAC and CRD manifests are applied for real by the fixtures)."""
    kinds = []
    for obj in manifests(DEPLOY / "app.yaml"):
        created = create(admin, obj, dry_run=True)
        assert created["metadata"]["name"] == obj["metadata"]["name"]
        kinds.append(obj["kind"])
    assert sorted(kinds) == ["ConfigMap", *["Deployment"] * 4, "Service"]  # web … beat
    listed = admin.request("GET", "/apis/apps/v1/namespaces/schedboard/deployments")
    assert listed["items"] == []  # dry run: nothing stored


def test_dry_run_validation_is_real(admin: Connection, rbac: None) -> None:
    [deployment] = [
        o
        for o in manifests(DEPLOY / "app.yaml")
        if o["kind"] == "Deployment" and o["metadata"]["name"] == "schedboard-web"
    ]
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = 70000
    with pytest.raises(PermanentError, match="containerPort: Invalid value: 70000"):
        create(admin, deployment, dry_run=True)


def test_the_service_account_can_do_the_gateways_work(
    service_account: Connection,
    seeded: list[Json],
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    conn = service_account
    informer = ClusterInformer()
    back = informer.read(conn)
    assert back.missing == [] and back.counts["Node"] >= 12 and back.counts["NodeMetric"] > 0
    listed = conn.request("GET", f"/apis/apps/v1/namespaces/{KOORD}/deployments")
    assert listed["kind"] == "DeploymentList"  # the scheduler's image: its build and version
    assert informer.read(conn).listed == []  # every kind may be watched: nothing listed again

    config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    apply_configmap_key(conn, KOORD, "koord-scheduler-config", "koord-scheduler-config", config)
    configmap = read_configmap(conn, KOORD, "koord-scheduler-config")
    key = "koord-scheduler-config"
    assert configmap_key_drift(configmap, KOORD, key, key, config) is None
    result = apply_slo_colocation(conn, collect_policy(30), [], set(), target=SloTarget())
    assert json.loads(result.applied[0].after or "")["metricReportIntervalSeconds"] == 30

    [node] = scratch_nodes(1)
    written = apply_node_annotations(conn, {node: "{}"}, set())
    assert (
        written.owned == {node}
        and annotation_drift(list_objects(conn, NODES).items, {node: "{}"}) == []
    )


@pytest.mark.parametrize(
    ("method", "path", "body", "denied"),
    [
        (
            "POST",
            f"/api/v1/namespaces/{KOORD}/configmaps",
            {"metadata": {"name": "x"}},
            'cannot create resource "configmaps"',
        ),
        (
            "GET",
            f"/api/v1/namespaces/{KOORD}/configmaps/other",
            None,
            'cannot get resource "configmaps"',
        ),
        (
            "GET",
            f"/api/v1/namespaces/{KOORD}/configmaps",
            None,
            'cannot list resource "configmaps"',
        ),
        ("GET", "/api/v1/namespaces/kube-system/secrets", None, 'cannot list resource "secrets"'),
        ("DELETE", "/api/v1/nodes/anything", None, 'cannot delete resource "nodes"'),
        ("PATCH", "/api/v1/namespaces/default/pods/p", {}, 'cannot patch resource "pods"'),
        # Only the verbs the gateway uses: lists, and one node's read and patch.
        ("GET", "/api/v1/namespaces/default/pods/p", None, 'cannot get resource "pods"'),
    ],
)
def test_the_service_account_gets_nothing_else(
    service_account: Connection, method: str, path: str, body: Json | None, denied: str
) -> None:
    with pytest.raises(PermanentError) as info:
        service_account.request(
            method,
            path,
            body=body,
            content_type="application/merge-patch+json"
            if method == "PATCH"
            else "application/json",
        )
    assert info.value.status == 403
    assert 'User "system:serviceaccount:schedboard:schedboard" ' + denied in info.value.message


def test_the_service_account_watches_only_what_refresh_reads(
    service_account: Connection,
) -> None:
    """Refresh lists each kind once per worker, then watches it: the kinds it reads may be
    watched, nothing else."""
    version = list_objects(service_account, NODES).resource_version
    list(watch(service_account, NODES, version, timeout_seconds=1, idle_seconds=0.3))
    for path in ("/api/v1/secrets", f"/api/v1/namespaces/{KOORD}/configmaps"):
        with pytest.raises(PermanentError) as info:
            service_account.request("GET", path, query={"watch": "true", "timeoutSeconds": 1})
        assert info.value.status == 403 and "cannot watch resource" in info.value.message


def test_a_missing_configmap_is_a_403_not_a_create(service_account: Connection) -> None:
    with pytest.raises(PermanentError, match="cannot get resource") as info:
        apply_configmap_key(service_account, KOORD, "not-granted", "k", "v")
    assert info.value.status == 403


def test_in_cluster_connection(kube: KubeServer, rbac: None, tmp_path: Path) -> None:
    """Connect as a pod would: service-account token and CA files, service host/port env."""
    port = kube.url.rsplit(":", 1)[1]
    spec = ConnectionSpec(
        "in-cluster",
        token_path=str(kube.directory / "sa-token"),
        ca_path=str(kube.ca_file),
        environ={"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": port},
    )
    with connect(spec) as conn:
        assert "in-cluster" in repr(conn)
        assert conn.request("GET", "/api/v1/nodes", query={"limit": 1})["kind"] == "NodeList"
