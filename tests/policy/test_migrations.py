"""Data migrations carry what an earlier release stored over to the new shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("policy", "0008_what_if_thresholds")]
AFTER = [("policy", "0009_collect_field_ownership")]


@pytest.fixture
def executor(transactional_db: None) -> Iterator[MigrationExecutor]:
    """Migrations run back and forth on the test database, and end at the newest again."""
    executor = MigrationExecutor(connection)
    yield executor
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def migrate(executor: MigrationExecutor, target: list[tuple[str, str]]) -> Any:
    executor.loader.build_graph()
    executor.migrate(target)
    return MigrationExecutor(connection).loader.project_state(target).apps


def test_collect_field_ownership_becomes_per_field(executor: MigrationExecutor) -> None:
    old = migrate(executor, BEFORE)
    clusters = old.get_model("policy", "Cluster")
    states = old.get_model("policy", "ClusterSyncState")
    policies = old.get_model("policy", "NodeMetricCollectPolicy")
    rows = {}
    for name, owns, interval, duration in [
        ("interval-only", True, 30, None),
        ("both", True, 30, 600),
        ("policy-gone", True, None, None),
        ("never-pushed", False, 30, None),
    ]:
        cluster = clusters.objects.create(name=name, kind="demo")
        states.objects.create(cluster=cluster, owns_collect_fields=owns)
        if interval or duration:
            policies.objects.create(
                cluster=cluster,
                name="default",
                is_default=True,
                report_interval_seconds=interval,
                aggregate_duration_seconds=duration,
            )
        rows[name] = cluster.pk

    new = migrate(executor, AFTER)
    owned = dict(
        new.get_model("policy", "ClusterSyncState").objects.values_list(
            "cluster_id", "owned_collect_fields"
        )
    )
    assert owned[rows["interval-only"]] == ["metricReportIntervalSeconds"]
    assert owned[rows["both"]] == ["metricAggregateDurationSeconds", "metricReportIntervalSeconds"]
    # Owned, with no policy left to say which: both, as the old rule would have removed both.
    assert owned[rows["policy-gone"]] == [
        "metricAggregateDurationSeconds",
        "metricReportIntervalSeconds",
    ]
    assert owned[rows["never-pushed"]] == []

    back = migrate(executor, BEFORE)
    flags = dict(
        back.get_model("policy", "ClusterSyncState").objects.values_list(
            "cluster_id", "owns_collect_fields"
        )
    )
    assert [flags[rows[name]] for name in ("interval-only", "both", "never-pushed")] == [
        True,
        True,
        False,
    ]


def test_existing_snapshots_become_keyframes_with_their_objects(
    executor: MigrationExecutor,
) -> None:
    old = migrate(executor, [("policy", "0015_scheduler_message")])
    cluster = old.get_model("policy", "Cluster").objects.create(name="kept", kind="demo")
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]
    snapshots = old.get_model("policy", "ClusterSnapshot").snapshots
    pk = snapshots.create(cluster=cluster, taken_at="2026-11-01T00:00:00Z", objects=objects).pk

    new = migrate(executor, [("policy", "0016_snapshot_chains")])
    row = new.get_model("policy", "ClusterSnapshot").snapshots.get(pk=pk)
    assert (row.stored_objects, row.keyframe_id, row.changes) == (objects, None, None)
