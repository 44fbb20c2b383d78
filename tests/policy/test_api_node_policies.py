"""Node threshold policies and NodeMetric collect policies: CRUD, validation, rendering."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import Cluster
from scoring.plugins.loadaware.thresholds import parse_custom
from tests.policy.policy_api import COLLECT, THRESHOLDS, fields_of, ok, patch, post

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(api_client: Any, editor: User) -> Any:
    api_client.force_login(editor)
    return api_client


@pytest.fixture
def cluster(demo_snapshot: Any) -> Cluster:
    return Cluster.objects.get(pk=demo_snapshot.cluster_id)


def node_names(demo_snapshot: Any) -> list[str]:
    return sorted(o["metadata"]["name"] for o in demo_snapshot.objects if o["kind"] == "Node")


def labels_of(demo_snapshot: Any, name: str) -> dict[str, str]:
    node = next(
        o for o in demo_snapshot.objects if o["kind"] == "Node" and o["metadata"]["name"] == name
    )
    return dict(node["metadata"].get("labels") or {})


def test_create_validate_and_annotation(client: Any, cluster: Cluster, demo_snapshot: Any) -> None:
    names = node_names(demo_snapshot)[:2]
    body = post(
        client,
        THRESHOLDS,
        {
            "cluster": cluster.pk,
            "name": "hot-nodes",
            "node_names": names,
            "usage_thresholds": {"cpu": 50},
            "aggregated_usage_thresholds": {"cpu": 45},
            "aggregated_usage_aggregation_type": "p95",
            "aggregated_usage_aggregated_duration": "5m",
        },
    )
    assert json.loads(body["annotation"]) == {
        "usageThresholds": {"cpu": 50},
        "aggregatedUsage": {
            "usageThresholds": {"cpu": 45},
            "usageAggregationType": "p95",
            "usageAggregatedDuration": "5m",
        },
    }
    parsed = parse_custom(body["annotation"])  # Koordinator reads it
    assert parsed.usage == {"cpu": 50}
    duplicate = post(
        client,
        THRESHOLDS,
        {
            "cluster": cluster.pk,
            "name": "hot-nodes",
            "node_names": names,
            "usage_thresholds": {"cpu": 1},
        },
        400,
    )
    assert "name" in duplicate


@pytest.mark.parametrize(
    ("fields", "errors"),
    [
        ({"node_names": ["n1"], "usage_thresholds": {"cpu": 101}}, {"usage_thresholds"}),
        ({"node_names": ["n1"], "usage_thresholds": {"cpu": -1}}, {"usage_thresholds"}),
        ({"node_names": ["n1"]}, {"usage_thresholds"}),
        ({"usage_thresholds": {"cpu": 60}}, {"node_names"}),
        (
            {"node_names": ["n1"], "node_selector": {}, "usage_thresholds": {"cpu": 60}},
            {"node_selector"},
        ),
        ({"node_names": ["Not_A_Node"], "usage_thresholds": {"cpu": 60}}, {"node_names"}),
        (
            {
                "node_selector": {"matchExpressions": [{"key": "zone", "operator": "Near"}]},
                "usage_thresholds": {"cpu": 60},
            },
            {"node_selector"},
        ),
        (
            {"node_names": ["n1"], "aggregated_usage_thresholds": {"cpu": 60}},
            {"aggregated_usage_aggregation_type"},
        ),
        (
            {
                "node_names": ["n1"],
                "aggregated_usage_thresholds": {"cpu": 60},
                "aggregated_usage_aggregation_type": "p42",
            },
            {"aggregated_usage_aggregation_type"},
        ),
        (
            {
                "node_names": ["n1"],
                "aggregated_usage_thresholds": {"cpu": 60},
                "aggregated_usage_aggregation_type": "p95",
                "aggregated_usage_aggregated_duration": "five minutes",
            },
            {"aggregated_usage_aggregated_duration"},
        ),
        (
            {"node_names": ["n1"], "usage_thresholds": {"cpu": 60}, "active_from": "22:00"},
            {"active_until"},
        ),
        ({"node_names": ["n1"], "usage_thresholds": {"cpu": "high"}}, {"usage_thresholds.cpu"}),
    ],
)
def test_invalid_threshold_policies(
    client: Any, cluster: Cluster, fields: dict[str, Any], errors: set[str]
) -> None:
    body = post(client, THRESHOLDS, {"cluster": cluster.pk, "name": "p", **fields}, 400)
    assert set(fields_of(body)) == errors, body


def test_render_priorities_selectors_and_time_windows(
    client: Any, cluster: Cluster, demo_snapshot: Any
) -> None:
    names = node_names(demo_snapshot)
    first = names[0]
    zone = labels_of(demo_snapshot, first)["topology.kubernetes.io/zone"]
    in_zone = [
        n for n in names if labels_of(demo_snapshot, n).get("topology.kubernetes.io/zone") == zone
    ]
    zone_policy = post(
        client,
        THRESHOLDS,
        {
            "cluster": cluster.pk,
            "name": "zone",
            "node_selector": {"matchLabels": {"topology.kubernetes.io/zone": zone}},
            "usage_thresholds": {"cpu": 60},
        },
    )
    night = post(
        client,
        THRESHOLDS,
        {
            "cluster": cluster.pk,
            "name": "night",
            "priority": 10,
            "node_names": [first],
            "usage_thresholds": {"cpu": 85},
            "active_from": "22:00",
            "active_until": "06:00",
        },
    )
    Cluster.objects.filter(pk=cluster.pk).update(timezone="Europe/Paris")
    url = f"/api/v1/clusters/{cluster.pk}/node-thresholds/render/"
    # 21:30 UTC is 22:30 in Paris (winter): the night window is on.
    at_night = ok(client.get(url, {"at": "2026-11-01T21:30:00+00:00"}))
    rows = {row["node"]: row for row in at_night["nodes"]}
    assert at_night["annotation"] == "scheduling.koordinator.sh/usage-thresholds"
    assert set(rows) == set(names)
    assert rows[first]["policy"]["name"] == "night"
    assert rows[first]["value"] == '{"usageThresholds":{"cpu":85}}'
    assert rows[first]["matching"] == ["night", "zone"]
    for name in in_zone[1:]:
        assert rows[name]["policy"]["id"] == zone_policy["id"]
    outside = [n for n in names if n not in in_zone]
    assert outside and all(rows[n]["value"] is None for n in outside)
    # 12:00 UTC: the window is off, the zone policy applies to the first node too.
    by_day = ok(client.get(url, {"at": "2026-11-01T12:00:00Z"}))
    rows = {row["node"]: row for row in by_day["nodes"]}
    assert rows[first]["policy"]["name"] == "zone"
    assert by_day["at"].endswith("+01:00")
    preview = ok(client.get(f"{THRESHOLDS}{night['id']}/preview/", {"at": "2026-11-01T12:00:00Z"}))
    assert preview["nodes"] == [first] and preview["active"] is False
    assert client.get(url, {"at": "yesterday"}).status_code == 400
    patch(client, f"{THRESHOLDS}{night['id']}/", {"enabled": False}, 'W/"1"')
    rows = {r["node"]: r for r in ok(client.get(url, {"at": "2026-11-01T21:30:00Z"}))["nodes"]}
    assert rows[first]["policy"]["name"] == "zone"


def test_render_without_snapshot_is_404(client: Any, db: None) -> None:
    cluster = Cluster.objects.create(name="empty")
    assert client.get(f"/api/v1/clusters/{cluster.pk}/node-thresholds/render/").status_code == 404


def test_collect_policies_render_colocation_config(client: Any, cluster: Cluster) -> None:
    default = post(
        client,
        COLLECT,
        {
            "cluster": cluster.pk,
            "name": "default",
            "is_default": True,
            "report_interval_seconds": 30,
        },
    )
    post(
        client,
        COLLECT,
        {
            "cluster": cluster.pk,
            "name": "pool-a",
            "node_selector": {"matchLabels": {"pool": "a"}},
            "report_interval_seconds": 15,
            "aggregate_duration_seconds": 120,
            "priority": 5,
        },
    )
    post(
        client,
        COLLECT,
        {
            "cluster": cluster.pk,
            "name": "pool-b",
            "node_selector": {
                "matchExpressions": [{"key": "pool", "operator": "In", "values": ["b"]}]
            },
            "aggregate_duration_seconds": 600,
        },
    )
    body = ok(client.get(f"/api/v1/clusters/{cluster.pk}/colocation-config/render/"))
    assert (body["namespace"], body["name"], body["key"]) == (
        "koordinator-system",
        "slo-controller-config",
        "colocation-config",
    )
    assert body["content"] == {
        "metricReportIntervalSeconds": 30,
        "nodeConfigs": [
            {
                "name": "pool-a",
                "nodeSelector": {"matchLabels": {"pool": "a"}},
                "metricAggregateDurationSeconds": 120,
                "metricReportIntervalSeconds": 15,
            },
            {
                "name": "pool-b",
                "nodeSelector": {
                    "matchExpressions": [{"key": "pool", "operator": "In", "values": ["b"]}]
                },
                "metricAggregateDurationSeconds": 600,
            },
        ],
    }
    assert json.loads(body["text"]) == body["content"]
    assert "enable" in body["notes"][0]
    second_default = post(
        client,
        COLLECT,
        {"cluster": cluster.pk, "name": "other", "is_default": True, "report_interval_seconds": 60},
        400,
    )
    assert second_default["errors"]
    zero = patch(client, f"{COLLECT}{default['id']}/", {"report_interval_seconds": 0}, 'W/"1"', 400)
    assert fields_of(zero) == {"report_interval_seconds": "FieldValueInvalid"}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"is_default": True, "node_selector": {}, "report_interval_seconds": 30}, "node_selector"),
        ({"report_interval_seconds": 30}, "node_selector"),
        ({"is_default": True}, "report_interval_seconds"),
        ({"is_default": True, "aggregate_duration_seconds": -5}, "aggregate_duration_seconds"),
        (
            {"node_selector": {"matchLabels": {"bad key!": "x"}}, "report_interval_seconds": 30},
            "node_selector",
        ),
    ],
)
def test_invalid_collect_policies(
    client: Any, cluster: Cluster, fields: dict[str, Any], field: str
) -> None:
    body = post(client, COLLECT, {"cluster": cluster.pk, "name": "p", **fields}, 400)
    assert field in fields_of(body), body


def test_threshold_policy_history_and_revert(client: Any, cluster: Cluster) -> None:
    created = post(
        client,
        THRESHOLDS,
        {"cluster": cluster.pk, "name": "p", "node_names": ["n1"], "usage_thresholds": {"cpu": 60}},
    )
    url = f"{THRESHOLDS}{created['id']}/"
    patch(
        client,
        url,
        {"usage_thresholds": {"cpu": 70}, "active_from": "22:00", "active_until": "06:00"},
        'W/"1"',
    )
    history = ok(client.get(f"{url}history/"))["results"]
    assert history[0]["diff"]["usage_thresholds"] == {"before": {"cpu": 60}, "after": {"cpu": 70}}
    assert history[0]["diff"]["active_from"] == {"before": None, "after": "22:00:00"}
    reverted = post(client, f"{url}revert/", {"version": 1}, 200, HTTP_IF_MATCH='W/"2"')
    assert reverted["usage_thresholds"] == {"cpu": 60} and reverted["active_from"] is None


def test_cluster_settings_are_operator_only(
    api_client: Any, editor: User, operator: User, cluster: Cluster
) -> None:
    url = f"/api/v1/clusters/{cluster.pk}/"
    api_client.force_login(editor)
    assert (
        api_client.patch(
            url, {"push_mode": "automatic"}, format="json", HTTP_IF_MATCH="*"
        ).status_code
        == 403
    )
    api_client.force_login(operator)
    response = api_client.get(url)
    assert response["ETag"] == 'W/"1"'
    body = response.json()
    assert (
        body["scheduler_config_namespace"],
        body["scheduler_config_name"],
        body["scheduler_config_key"],
    ) == (  # Koordinator's chart's place, which deploy/rbac.yaml grants
        "koordinator-system",
        "koord-scheduler-config",
        "koord-scheduler-config",
    )
    changed = api_client.patch(
        url,
        {
            "push_mode": "automatic",
            "timezone": "Asia/Tokyo",
            "scheduler_config_key": "scheduler.yaml",
            "name": "renamed",
        },
        format="json",
        HTTP_IF_MATCH='W/"1"',
    )
    assert changed.status_code == 200, changed.json()
    assert changed.json()["name"] == "demo" and changed.json()["timezone"] == "Asia/Tokyo"
    bad = api_client.patch(
        url,
        {"timezone": "Mars/Olympus", "scheduler_config_namespace": "Kube System"},
        format="json",
        HTTP_IF_MATCH="*",
    )
    assert set(bad.json()) >= {"timezone", "scheduler_config_namespace", "errors"}
    assert api_client.post("/api/v1/clusters/", {"name": "x"}).status_code == 403  # superusers


def test_a_threshold_for_a_resource_no_node_has_is_saved_with_a_warning(
    client: Any, cluster: Cluster
) -> None:
    """``cpuu`` is a valid resource name, but no node reports it: the write says so."""
    body = post(
        client,
        THRESHOLDS,
        {
            "cluster": cluster.pk,
            "name": "typo",
            "node_names": ["n1"],
            "usage_thresholds": {"cpuu": 70},
        },
    )
    assert body["warnings"] == [
        "usage_thresholds: no node of the newest snapshot reports 'cpuu'; "
        "its threshold is never checked"
    ]
    assert client.get(f"{THRESHOLDS}{body['id']}/").json()["warnings"] == []
    fixed = patch(client, f"{THRESHOLDS}{body['id']}/", {"usage_thresholds": {"cpu": 70}}, 'W/"1"')
    assert fixed["warnings"] == []
