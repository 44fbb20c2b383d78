"""Trends over the snapshot history (policy.web.trends): each snapshot's load summed up once into
a SnapshotTrend row, read back for the dashboard's and the node page's charts without
rebuilding or materializing any snapshot, bounded to the newest WINDOW snapshots."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import ClusterSnapshot, PreparedView, SnapshotTrend
from policy.clusters.services import load_demo_cluster
from policy.web import pages as support
from policy.web import trends
from policy.web.presenters.loadaware import ArgsInfo, ClusterLoad, NodeLoad, Usage
from tests.conftest import NOW


def node(index: int, cpu: int | None, memory: int | None, *, filtered: str | None = None) -> Any:
    def usage(total: int | None, threshold: int) -> Usage:
        return Usage(measured=total, estimated=0, total=total, threshold=threshold, allocatable=1)

    return NodeLoad(
        index=index,
        name=f"node-{index}",
        zone="a",
        pool="p",
        unschedulable=False,
        pods=1,
        metric="fresh" if cpu is not None else "missing",
        metric_age=1.0,
        has_usage=cpu is not None,
        threshold_profile="node",
        threshold_source="args",
        annotated=False,
        annotation_error=None,
        usage={"cpu": usage(cpu, 65), "memory": usage(memory, 95)},
        filtered=filtered,
    )


def cluster_load(rows: list[Any]) -> ClusterLoad:
    args = ArgsInfo(
        origin="test",
        profile=None,
        filter_enabled=True,
        score_enabled=True,
        thresholds={"cpu": 65, "memory": 95},
        prod_thresholds={},
        aggregated=None,
        expiration_seconds=180,
        filter_expired=True,
        schedule_when_expired=False,
        args={},
    )
    return ClusterLoad(rows=rows, args=args, taken_at=NOW, pods_bound=10, pods_pending=4)


def test_aggregate_sums_up_a_load() -> None:
    rows = [node(k, 10 * k, 50, filtered="cpu" if 10 * k > 65 else None) for k in range(1, 11)]
    rows.append(node(11, None, None))  # no usable NodeMetric: not in the statistics
    fields = trends.aggregate(cluster_load(rows))
    assert fields["nodes"] == 11 and fields["measured"] == 10
    assert (fields["cpu_mean"], fields["cpu_p90"], fields["cpu_max"]) == (55.0, 91.0, 100.0)
    assert (fields["memory_mean"], fields["memory_p90"], fields["memory_max"]) == (50, 50, 50)
    assert fields["over"] == 4  # 70, 80, 90, 100 > 65
    assert fields["filtered"] == 4 and fields["pods_pending"] == 4
    assert fields["per_node"]["node-3"] == [30, 50, 65, 95]
    assert fields["per_node"]["node-11"] == [None, None, 65, 95]


def test_aggregate_of_no_measured_node() -> None:
    fields = trends.aggregate(cluster_load([node(1, None, None)]))
    assert fields["cpu_mean"] is None and fields["cpu_max"] is None and fields["over"] == 0


@pytest.fixture
def history(db: None, run_on_commit: Any) -> Iterator[list[ClusterSnapshot]]:
    """Five snapshots of the demo cluster a minute apart, each prepared as the worker does."""
    snapshots = []
    for minute in range(5):
        with run_on_commit():
            snapshots.append(load_demo_cluster(nodes=12, now=NOW + timedelta(minutes=minute)))
    yield snapshots
    support.clear_caches()


def key_of(stored: ClusterSnapshot) -> str:
    return support.trend_key(support.loadaware_source(stored.cluster))


def test_preparing_a_snapshot_records_its_trend(history: list[ClusterSnapshot]) -> None:
    newest = history[-1]
    rows = SnapshotTrend.objects.filter(snapshot__in=history)
    assert rows.count() == 5
    points = trends.points(newest.cluster, key_of(newest))
    assert [p.snapshot_id for p in points] == [s.pk for s in history]  # oldest first
    assert [p.taken_at for p in points] == [s.taken_at for s in history]
    load = support.load_for_page(newest, support.loadaware_source(newest.cluster)).load
    expected = trends.aggregate(load)
    last = points[-1]
    assert last.nodes == 12 == expected["nodes"]
    assert last.cpu_mean == expected["cpu_mean"] and last.memory_p90 == expected["memory_p90"]
    assert last.over == expected["over"] and last.filtered == load.filtered


def test_a_trend_is_bounded_and_never_materializes(
    history: list[ClusterSnapshot], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any) -> Any:
        raise AssertionError("a trend materialized a snapshot")

    monkeypatch.setattr("policy.clusters.snapshot_chains.materialize", refuse)
    monkeypatch.setattr(support, "engine_snapshot", refuse)
    newest = history[-1]
    points = trends.points(newest.cluster, key_of(newest), window=3)
    assert [p.snapshot_id for p in points] == [s.pk for s in history[-3:]]
    nodes = trends.node_points(newest.cluster, "node-0000", key_of(newest), window=3)
    assert len(nodes) <= 3


def test_older_snapshots_are_backfilled_from_their_prepared_load(
    history: list[ClusterSnapshot],
) -> None:
    newest = history[-1]
    SnapshotTrend.objects.all().delete()
    points = trends.points(newest.cluster, key_of(newest), backfill=2)
    assert [p.snapshot_id for p in points] == [s.pk for s in history[-2:]]
    points = trends.points(newest.cluster, key_of(newest), backfill=2)
    assert len(points) == 4
    # Without a prepared load there is nothing to read: the snapshot is left out, not rebuilt.
    SnapshotTrend.objects.all().delete()
    PreparedView.objects.filter(snapshot=history[0]).delete()
    points = trends.points(newest.cluster, key_of(newest), backfill=10)
    assert [p.snapshot_id for p in points] == [s.pk for s in history[1:]]


def test_node_points_follow_one_node(history: list[ClusterSnapshot]) -> None:
    newest = history[-1]
    load = support.load_for_page(newest, support.loadaware_source(newest.cluster)).load
    row = load.rows[0]
    points = trends.node_points(newest.cluster, row.name, key_of(newest))
    assert len(points) == 5
    last = points[-1]
    assert (last.cpu, last.memory) == (row.usage["cpu"].total, row.usage["memory"].total)
    assert last.cpu_threshold == row.usage["cpu"].threshold
    assert trends.node_points(newest.cluster, "no-such-node", key_of(newest)) == []


def test_dashboard_and_node_page_show_the_trends(
    client: Client, viewer: User, history: list[ClusterSnapshot]
) -> None:
    client.force_login(viewer)
    newest = history[-1]
    response = client.get(f"/?cluster={newest.cluster_id}")
    assert response.status_code == 200
    html = response.content.decode()
    assert [c.title for c in response.context["load_trends"]["charts"]] == [
        "cpu load",
        "memory load",
        "Filtered now",
    ]
    assert 'class="chart timeline pygal-chart"' in html
    assert "Values of the last 5 snapshots" in html
    name = response.context["rows"][0].name
    response = client.get(f"/clusters/{newest.cluster_id}/nodes/{name}/")
    assert response.status_code == 200
    assert response.context["trend"] is not None
    assert len(response.context["trend_points"]) == 5
    assert f"Load of node {name}" in response.content.decode()


def test_one_snapshot_has_no_trend_yet(client: Client, viewer: User, demo_snapshot: Any) -> None:
    client.force_login(viewer)
    response = client.get(f"/?cluster={demo_snapshot.cluster_id}")
    assert response.status_code == 200
    assert response.context["load_trends"]["charts"] == []
    assert "Utilization trends appear once two snapshots" in response.content.decode()
    assert SnapshotTrend.objects.filter(snapshot=demo_snapshot).count() == 1  # recorded


def test_a_nodes_entry_is_found_without_parsing_the_others() -> None:
    per_node = {"xa-1": [1, 2, 3, 4], "a-1": [5, None, 7, 0], 'q"uote': [9, 9, 9, 9]}
    data = json.dumps(per_node, separators=(",", ":")).encode()
    assert trends._node_entry(data, "a-1") == [5, None, 7, 0]
    assert trends._node_entry(data, "xa-1") == [1, 2, 3, 4]
    assert trends._node_entry(data, 'q"uote') == [9, 9, 9, 9]
    assert trends._node_entry(data, "a") is None


def test_rows_of_another_profile_are_not_mixed_in() -> None:
    rows = [
        {"id": 1, "snapshot_id": 1, "key": "old:default-scheduler"},
        {"id": 2, "snapshot_id": 1, "key": "new:batch-scheduler"},
        {"id": 3, "snapshot_id": 2, "key": "defaults:"},
        {"id": 4, "snapshot_id": 3, "key": "new:default-scheduler"},
        {"id": 5, "snapshot_id": 3, "key": "defaults:"},
        {"id": 6, "snapshot_id": 4, "key": "new:batch-scheduler"},
    ]
    chosen = trends._pick(rows, "new:default-scheduler")
    assert {k: v["id"] for k, v in chosen.items()} == {1: 1, 2: 3, 3: 4}
