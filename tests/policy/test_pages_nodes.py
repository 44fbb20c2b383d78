"""The node page: capacity and commitments, LoadAware's view, thresholds, NUMA zones, pods."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from policy.clusters.models import ClusterSnapshot
from policy.clusters.services import load_demo_cluster
from tests.conftest import NOW
from tests.policy.builders import loadaware_configuration

pytestmark = pytest.mark.django_db


def node_page(
    client: Client, user: User, snapshot: ClusterSnapshot, name: str, query: str = ""
) -> Any:
    client.force_login(user)
    return client.get(f"/clusters/{snapshot.cluster_id}/nodes/{name}/{query}")


def test_resources_requests_limits_and_pods(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = node_page(client, viewer, demo_snapshot, "general-b-0001")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>general-b-0001 — demo · schedboard</title>" in html
    detail = response.context["detail"]
    lines = {line.name: line for line in detail.resources}
    assert {"cpu", "memory", "pods"} <= set(lines)
    cpu = lines["cpu"]
    assert cpu.requested_percent is not None and 0 < cpu.requested_percent <= 100
    assert cpu.limits_percent is not None and cpu.limits_percent >= cpu.requested_percent
    assert len(detail.pods) == response.context["snapshot"].pod_count // 12 or detail.pods
    assert all(p.key in html for p in detail.pods)
    assert "Limits / allocatable" in html


def test_loadaware_arithmetic_and_threshold_source(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = node_page(client, viewer, demo_snapshot, "general-b-0010")
    html = response.content.decode()
    thresholds = response.context["detail"].thresholds
    assert thresholds.usage == {"cpu": 75, "memory": 90}
    assert thresholds.usage_source == "node annotation"
    assert '{"usageThresholds":{"cpu":75,"memory":90}}' in html.replace("&quot;", '"')
    la = response.context["la"]
    assert la["filter"]["checked"] and "threshold from node annotation" in la["summary"]
    assert escape(la["summary"]) in html
    assert [line.resource for line in response.context["la_lines"]] == ["cpu", "memory"]


def test_expired_and_missing_node_metrics(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    load_html = node_page(client, viewer, demo_snapshot, "gpu-a-0000").content.decode()
    assert "LoadAware: node(s) nodeMetric expired" in load_html
    assert "expired" in load_html
    client.force_login(viewer)
    rows = client.get("/?state=missing").context["rows"]
    html = node_page(client, viewer, demo_snapshot, rows[0].name).content.decode()
    assert "no NodeMetric: the node is not load-aware" in html


def test_numa_zones_from_the_node_resource_topology(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = node_page(client, viewer, demo_snapshot, "gpu-b-0004")
    topology = response.context["detail"].topology
    assert topology is not None and topology["zones"]
    numa = [zone for zone in topology["zones"] if zone.numa]
    assert numa and all(zone.resources for zone in numa)
    html = response.content.decode()
    assert "Topology manager policy" in html and numa[0].zone in html
    no_nrt = node_page(client, viewer, demo_snapshot, "general-b-0001").content.decode()
    assert "No NodeResourceTopology for this node." in no_nrt


def test_older_snapshots_and_unknown_nodes(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    newer = load_demo_cluster(nodes=12, now=NOW + timedelta(minutes=10))
    response = node_page(
        client, viewer, demo_snapshot, "gpu-a-0000", f"?snapshot={demo_snapshot.pk}"
    )
    assert response.context["snapshot"].pk == demo_snapshot.pk
    assert b"see the newest snapshot" in response.content
    assert node_page(client, viewer, newer, "gpu-a-0000").context["snapshot"].pk == newer.pk
    assert node_page(client, viewer, demo_snapshot, "no-such-node").status_code == 404
    assert node_page(client, viewer, demo_snapshot, "gpu-a-0000", "?snapshot=x").status_code == 404
    client.force_login(viewer)
    assert client.get("/clusters/999/nodes/gpu-a-0000/").status_code == 404


def test_configured_profile_thresholds(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 20, "memory": 90})
    response = node_page(client, viewer, demo_snapshot, "general-b-0001")
    assert response.context["detail"].thresholds.usage == {"cpu": 20, "memory": 90}
    assert "scheduler configuration #" in response.content.decode()


def test_node_page_needs_a_role(
    client: Client, nobody: User, demo_snapshot: ClusterSnapshot
) -> None:
    assert node_page(client, nobody, demo_snapshot, "gpu-a-0000").status_code == 403


def test_the_node_itself_labels_taints_conditions_images_and_its_threshold_policy(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    from policy.policies.models import NodeThresholdPolicy

    node = next(o for o in demo_snapshot.objects if o["kind"] == "Node")
    name = node["metadata"]["name"]
    policy = NodeThresholdPolicy.objects.create(
        cluster=demo_snapshot.cluster,
        name="pinned",
        node_names=[name],
        usage_thresholds={"cpu": 70},
    )
    response = node_page(client, viewer, demo_snapshot, name)
    html = response.content.decode()
    detail = response.context["detail"]
    for key, value in node["metadata"]["labels"].items():
        assert escape(f"{key}={value}") in html
    assert [c["type"] for c in detail.conditions] == [
        c["type"] for c in node["status"].get("conditions", [])
    ]
    assert len(detail.images) == len(node["status"].get("images", []))
    assert f'href="/policies/thresholds/{policy.pk}/">pinned</a>' in html
    other = next(o for o in demo_snapshot.objects if o["kind"] == "Node" and o is not node)
    html = node_page(client, viewer, demo_snapshot, other["metadata"]["name"]).content.decode()
    assert "pinned" not in html


def test_a_cordoned_node_does_not_read_as_passing(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """The demo's cordoned node passes LoadAware's load check, but no new pod lands on it: its
    page and its dashboard row say that, not a green "passes"."""
    html = node_page(client, viewer, demo_snapshot, "general-a-0009").content.decode()
    assert "no new pods: NodeUnschedulable refuses them" in html
    assert "LoadAware's load check alone would pass" in html
    assert "LoadAware passes" not in html
    row = client.get("/?state=cordoned").content.decode().split("general-a-0009", 1)[1]
    verdict = row.split('<td class="verdict-cell" data-label="LoadAware now">', 1)[1]
    verdict = verdict.split("</td>", 1)[0]
    assert verdict == '<span class="verdict">cordoned (load passes)</span>'
    other = node_page(client, viewer, demo_snapshot, "general-b-0001").content.decode()
    assert '<span class="verdict ok">LoadAware passes</span>' in other


def test_the_load_headline_names_every_resource(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """cpu and memory side by side, each against its threshold, above the plugin's summary
    (which names the resource that decides)."""
    response = node_page(client, viewer, demo_snapshot, "general-b-0010")
    html = response.content.decode()
    headline = html.split('<p class="summary-line">', 1)[1].split("</p>", 1)[0]
    lines = response.context["la_lines"]
    for line in lines:
        shown = f"{line.resource} <strong>{line.usage_percent}</strong>"
        assert f'{shown} <span class="muted">of {line.threshold}</span>' in headline
    assert [line.resource for line in lines] == ["cpu", "memory"]
