"""``POST /api/v1/clusters/{id}/loadaware-sweep/`` on the demo cluster: the sweep agrees with
the dashboard's "filtered now" at the threshold in force, is monotonic, and recommends a
threshold per pool from the recorded load, saying how."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot, SnapshotTrend
from policy.web.pages import prepare_views
from tests.policy.builders import loadaware_configuration

pytestmark = pytest.mark.django_db

BODY = {"profile": "default-scheduler", "resource": "cpu", "from": 10, "to": 100, "step": 5}


@pytest.fixture
def swept(demo_snapshot: ClusterSnapshot) -> ClusterSnapshot:
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 40})
    assert prepare_views(demo_snapshot)  # the dashboard's load and trend of the snapshot
    return demo_snapshot


def post(client: Any, snapshot: ClusterSnapshot, body: dict[str, Any]) -> Any:
    return client.post(
        f"/api/v1/clusters/{snapshot.cluster_id}/loadaware-sweep/", body, format="json"
    )


def test_the_sweep_equals_filtered_now_at_the_current_threshold_and_is_monotonic(
    api_client: Any, viewer: User, swept: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    response = post(api_client, swept, {**BODY, "pool_label": "pool"})
    assert response.status_code == 200, response.content
    body = response.json()
    filtered_now = SnapshotTrend.objects.get(snapshot=swept).filtered
    assert body["current"]["threshold"] == 40
    assert body["current"]["filtered"] == filtered_now > 0
    rows = body["rows"]
    assert [r["threshold"] for r in rows] == list(range(10, 101, 5))
    assert next(r for r in rows if r["threshold"] == 40)["filtered"] == filtered_now
    filtered = [r["filtered"] for r in rows]
    placeable = [r["pending_placeable"] for r in rows]
    assert filtered == sorted(filtered, reverse=True) and filtered[-1] < filtered[0]
    assert placeable == sorted(placeable)
    for row in rows:
        assert sum(row["by_pool"].values()) == row["filtered"]
    recommendation = body["recommendation"]
    assert set(recommendation) == set(rows[0]["by_pool"])
    for pool in recommendation.values():
        if pool["threshold"] < 100:  # p95 rounded up, plus 10 points
            assert pool["p95"] - 0.05 <= pool["threshold"] - 10 < pool["p95"] + 1.05
        assert pool["p50"] <= pool["p95"] <= pool["max"]
        assert "p95" in pool["how"] and "snapshot" in pool["how"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"from": 101}, "from"),
        ({"from": 60, "to": 50}, "to"),
        ({"step": 0}, "step"),
        ({"step": "5"}, "step"),
        ({"resource": "gpu"}, "resource"),
        ({"profile": "batch"}, "profile"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    api_client: Any, viewer: User, swept: ClusterSnapshot, change: dict[str, Any], field: str
) -> None:
    api_client.force_login(viewer)
    response = post(api_client, swept, {**BODY, **change})
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]


def test_the_sweep_page_draws_the_rows_and_the_recommendation(
    client: Any, viewer: User, swept: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    url = f"/clusters/{swept.cluster_id}/loadaware-sweep/"
    page = client.get(url, {"from": 30, "to": 60, "step": 10}).content.decode()
    filtered_now = SnapshotTrend.objects.get(snapshot=swept).filtered
    assert f"40%, {filtered_now} node" in page
    for threshold in (30, 40, 50, 60):
        assert f'data-threshold="{threshold}"' in page
    assert "<svg" in page and 'data-pool="gpu"' in page
    wrong = client.get(url, {"from": 70, "to": 60}).content.decode()
    assert 'data-error="to"' in wrong
    dashboard = client.get("/", {"cluster": swept.cluster_id}).content.decode()
    assert url in dashboard
