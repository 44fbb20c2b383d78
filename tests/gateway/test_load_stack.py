"""The load-aware stack of a real kube-apiserver seeded as Koordinator's v1.7 chart does, with
LowNodeLoad enabled (LoadAware memory 95, LowNodeLoad high memory 80, koordlet memory eviction
at 70): one refresh adopts koord-descheduler's configuration and koordlet's thresholds as
written, coherence reports both planted contradictions with their values and sources, and
``lownodeload/`` marks over exactly the nodes whose NodeMetric usage exceeds a high threshold."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User

from policy.clusters.gateway.connection import Connection
from policy.clusters.models import Cluster
from policy.policies.models import DeschedulerConfiguration, KoordletThresholdConfig
from policy.sync import services as sync_services
from scoring.config.dump import leaves
from tests.gateway.kubeserver import KubeServer, create, ensure_namespaces, seed
from tests.scoring.builders import make_node

NAMESPACE = "koordinator-system"
FIXTURES = Path(__file__).parents[1] / "scoring" / "fixtures"
DESCHEDULER = (
    FIXTURES / "descheduler" / "koord-descheduler-config-v1.7.0-lownodeload.yaml"
).read_text()
SCHEDULER = (FIXTURES / "scheduler-configs" / "koordinator-v1.7.0-v1.yaml").read_text()
THRESHOLDS = '{"clusterStrategy": {"enable": true, "memoryEvictThresholdPercent": 70}}'
# memory usage (GiB of 100) per node: above 80, at 80 (not above), below 55
USAGE = {"hot": 90, "edge": 80, "cold": 20}


def _configmap(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "data": data,
    }


def _metric(node: str, memory_gib: int) -> dict[str, Any]:
    now = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": node},
        "status": {
            "updateTime": now,
            "nodeMetric": {"systemUsage": {"resources": {"cpu": "1", "memory": f"{memory_gib}Gi"}}},
            "podsMetric": [],
        },
    }


@pytest.mark.django_db
def test_refresh_adopts_the_stack_and_finds_its_contradictions(
    kube: KubeServer,
    admin: Connection,
    unique: Callable[[str], str],
    run_on_commit: Any,
    api_client: Any,
    viewer: User,
) -> None:
    ensure_namespaces(admin, [NAMESPACE])
    names = {role: unique(role) for role in USAGE}
    scheduler_cm, slo_cm, descheduler_cm = (unique(n) for n in ("sched", "slo", "desched"))
    create(admin, _configmap(scheduler_cm, {"koord-scheduler-config": SCHEDULER}))
    create(admin, _configmap(slo_cm, {"resource-threshold-config": THRESHOLDS}))
    create(admin, _configmap(descheduler_cm, {"koord-descheduler-config": DESCHEDULER}))
    alloc = {"cpu": "16", "memory": "100Gi", "pods": "110"}
    seed(
        admin,
        [make_node(name, alloc) for name in names.values()]
        + [_metric(names[role], gib) for role, gib in USAGE.items()],
    )
    cluster = Cluster.objects.create(
        name=unique("stack"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
        scheduler_config_name=scheduler_cm,
        slo_config_name=slo_cm,
        descheduler_config_name=descheduler_cm,
    )
    with run_on_commit():
        refresh = sync_services.refresh(cluster)
    refresh.refresh_from_db()
    assert refresh.status == "succeeded", refresh.log
    assert DeschedulerConfiguration.objects.get(cluster=cluster).source == DESCHEDULER
    assert KoordletThresholdConfig.objects.get(cluster=cluster).source == THRESHOLDS

    api_client.force_login(viewer)
    listed = api_client.get("/api/v1/descheduler-configurations/", {"cluster": cluster.pk}).json()
    (item,) = listed["results"]
    rendered = api_client.get(f"/api/v1/descheduler-configurations/{item['id']}/render/").json()
    assert rendered["text"] == DESCHEDULER and rendered["name"] == descheduler_cm

    findings = api_client.get(f"/api/v1/clusters/{cluster.pk}/coherence/").json()["findings"]
    by_rule = {f["rule"]: f for f in findings}
    assert [v["value"] for v in by_rule["R1"]["values"]] == [95, 80.0]
    assert by_rule["R1"]["values"][1]["source"].startswith(f"{NAMESPACE}/{descheduler_cm}:")
    assert [v["value"] for v in by_rule["R3"]["values"]] == [95, 70]
    assert by_rule["R3"]["values"][1]["source"].startswith(f"{NAMESPACE}/{slo_cm}:")
    assert set(names.values()) <= set(by_rule["R3"]["nodes"])

    body = api_client.get(f"/api/v1/clusters/{cluster.pk}/lownodeload/").json()
    ours = {n["node"]: n for n in body["nodes"] if n["node"] in names.values()}
    exceeding = {
        name
        for name, node in ours.items()
        if any(r["usage"] > r["high"] for r in node["resources"].values() if r["usage"] is not None)
    }
    assert exceeding == {names["hot"]}
    assert {name for name, node in ours.items() if node["state"] == "over"} == exceeding


@pytest.mark.django_db
def test_one_field_lownodeload_edit_pushes_exactly_that_leaf(
    kube: KubeServer,
    admin: Connection,
    unique: Callable[[str], str],
    run_on_commit: Any,
    push_now: Callable[[Cluster], Any],
    api_client: Any,
    editor: User,
) -> None:
    ensure_namespaces(admin, [NAMESPACE])
    name = unique("desched")
    create(admin, _configmap(name, {"koord-descheduler-config": DESCHEDULER}))
    cluster = Cluster.objects.create(
        name=unique("edit"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
        scheduler_config_name=unique("absent"),
        slo_config_name=unique("absent"),
        descheduler_config_name=name,
    )
    with run_on_commit():
        refresh = sync_services.refresh(cluster)
    refresh.refresh_from_db()
    assert refresh.status == "succeeded", refresh.log
    row = DeschedulerConfiguration.objects.get(cluster=cluster)
    api_client.force_login(editor)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/"
    response = api_client.patch(
        url, {"highThresholds": {"memory": 90}}, format="json", HTTP_IF_MATCH='W/"1"'
    )
    assert response.status_code == 200, response.content

    def live() -> dict[str, Any]:
        configmap = admin.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}")
        return dict(leaves(yaml.safe_load(configmap["data"]["koord-descheduler-config"])))

    before = live()
    job = push_now(cluster)
    assert job.status == "succeeded", job.log
    after = live()
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {"profiles[0].pluginConfig[1].args.highThresholds.memory"}
    assert after["profiles[0].pluginConfig[1].args.highThresholds.memory"] == 90
    row.refresh_from_db()
    assert not row.edited

    # Someone edits the document schedboard wrote: the next refresh reports it as drift, with
    # the diff, beside what it adopts; a push of an unchanged document leaves no drift.
    written = admin.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}")
    text = written["data"]["koord-descheduler-config"]
    assert "memory: 90" in text
    written["data"]["koord-descheduler-config"] = text.replace("memory: 90", "memory: 85")
    admin.request("PUT", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}", body=written)
    with run_on_commit():
        again = sync_services.refresh(cluster)
    again.refresh_from_db()
    assert again.status == "succeeded", again.log
    [drift] = sync_services.drift_report(cluster)["drift"]
    assert (drift["kind"], drift["name"]) == ("ConfigMap", name)
    assert drift["field"] == "data[koord-descheduler-config]"
    assert "-        memory: 90" in drift["diff"] and "+        memory: 85" in drift["diff"]
    row.refresh_from_db()
    assert "memory: 85" in row.source  # adopted as read, and reported by that refresh
    with run_on_commit():
        followed = sync_services.refresh(cluster)
    followed.refresh_from_db()
    assert followed.status == "succeeded", followed.log
    assert sync_services.drift_report(cluster)["drift"] == []  # followed from then on

    # An edit made here waits for a push while someone changes the document again: it is not
    # followed, and its drift stays reported until the push (whose plan shows it).
    row.refresh_from_db()
    pending = api_client.patch(
        url, {"highThresholds": {"memory": 91}}, format="json", HTTP_IF_MATCH=f'W/"{row.version}"'
    )
    assert pending.status_code == 200, pending.content
    again_written = admin.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}")
    text = again_written["data"]["koord-descheduler-config"]
    again_written["data"]["koord-descheduler-config"] = text.replace("memory: 85", "memory: 86")
    admin.request("PUT", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}", body=again_written)
    for _ in range(2):
        with run_on_commit():
            job = sync_services.refresh(cluster)
        job.refresh_from_db()
        assert job.status == "succeeded", job.log
        [kept] = sync_services.drift_report(cluster)["drift"]
        assert "+        memory: 86" in kept["diff"]
    row.refresh_from_db()
    assert row.edited and "memory: 91" in row.source  # the edit made here is kept
