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


def _decision(model: Any, cluster: Any, when: Any, name: str, **fields: Any) -> Any:
    """A decision row of the historical ``model`` with what every test here gives alike."""
    return model.objects.create(
        cluster=cluster,
        snapshot_taken_at=when,
        pod_namespace="a",
        pod_name=name,
        pod={},
        profile="default-scheduler",
        outcome="scheduled",
        feasible_nodes=0,
        total_nodes=0,
        source="api",
        **fields,
    )


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


def test_decisions_are_stored_compact_and_back(executor: MigrationExecutor) -> None:
    from datetime import UTC, datetime

    from scoring import decision_codec
    from tests.scoring.test_decision_codec import EXTENDED, NOW

    explanations = _explanations(EXTENDED, NOW)
    assert len(explanations) == 3 and all(e["nodes"] for e in explanations)
    explanations += [{}, {"pod": "a/b", "nodes": [], "message": "ünïcødé"}]

    old = migrate(executor, [("policy", "0016_snapshot_chains")])
    cluster = old.get_model("policy", "Cluster").objects.create(name="c", kind="demo")
    decisions = old.get_model("policy", "PlacementDecision")
    when = datetime(2026, 11, 22, tzinfo=UTC)
    ids = [
        _decision(decisions, cluster, when, f"p{k}", explanation=explanation).pk
        for k, explanation in enumerate(explanations)
    ]

    new = migrate(executor, [("policy", "0017_compact_decisions")])
    rows = new.get_model("policy", "PlacementDecision").objects.in_bulk(ids)
    for pk, explanation in zip(ids, explanations, strict=True):
        data = bytes(rows[pk].explanation_data)
        assert data.startswith(decision_codec.MAGIC_V1)  # format 1, as when 0017 was written
        assert decision_codec.decode(data) == explanation
        summary = rows[pk].explanation_summary
        assert summary["nodes"] == len(explanation.get("nodes", ()))
        assert summary["bytes"] == len(data)
        assert summary["fields"] == {k: v for k, v in explanation.items() if k != "nodes"}

    back = migrate(executor, [("policy", "0016_snapshot_chains")])
    restored = back.get_model("policy", "PlacementDecision").objects.in_bulk(ids)
    assert [restored[pk].explanation for pk in ids] == explanations


def test_decisions_stored_alone_come_to_share_a_base_per_snapshot_and_back(
    executor: MigrationExecutor,
) -> None:
    import lzma
    from datetime import UTC, datetime

    from scoring import columnar, decision_codec
    from tests.scoring.test_decision_codec import EXTENDED, NOW

    explanations = [*_explanations(EXTENDED, NOW), {}]
    old = migrate(executor, [("policy", "0022_explanation_bases")])
    cluster = old.get_model("policy", "Cluster").objects.create(name="c", kind="demo")
    decisions = old.get_model("policy", "PlacementDecision")
    times = [datetime(2026, 11, 22, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)]
    ids = []
    for k, explanation in enumerate(explanations):
        v1 = decision_codec.MAGIC_V1 + lzma.compress(columnar.pack([explanation]))
        summary = {"nodes": 0, "bytes": len(v1)}
        row = _decision(
            decisions,
            cluster,
            times[k % 2],
            f"p{k}",
            explanation_data=v1,
            explanation_summary=summary,
        )
        ids.append(row.pk)

    new = migrate(executor, [("policy", "0023_decisions_share_bases")])
    rows = new.get_model("policy", "PlacementDecision").objects.in_bulk(ids)
    bases = new.get_model("policy", "ExplanationBase").objects.in_bulk()
    assert len(bases) == 2  # one per snapshot time
    for pk, explanation in zip(ids, explanations, strict=True):
        data = bytes(rows[pk].explanation_data)
        base = decision_codec.Base.from_bytes(bytes(bases[rows[pk].explanation_base_id].data))
        assert decision_codec.base_digest(data) == base.digest
        assert decision_codec.decode(data, base) == explanation
        assert rows[pk].explanation_summary["bytes"] == len(data)

    back = migrate(executor, [("policy", "0022_explanation_bases")])
    restored = back.get_model("policy", "PlacementDecision").objects.in_bulk(ids)
    assert not back.get_model("policy", "ExplanationBase").objects.exists()
    for pk, explanation in zip(ids, explanations, strict=True):
        data = bytes(restored[pk].explanation_data)
        assert data.startswith(decision_codec.MAGIC_V1)
        assert decision_codec.decode(data) == explanation


def _explanations(profile: Any, now: Any) -> list[dict[str, Any]]:
    """The engine's JSON for three pending pods of a small synthetic cluster."""
    from scoring.config import load_configuration
    from scoring.engine import Engine
    from scoring.objects import parse_pod
    from scoring.snapshot import Snapshot
    from scoring.synthetic import generate_cluster

    snapshot = Snapshot.from_objects(generate_cluster(nodes=20, seed=3, now=now))
    engine = Engine(load_configuration(profile))
    return [
        engine.evaluate(parse_pod(pod.raw), snapshot, now).to_dict()
        for pod in snapshot.pending
        if pod.scheduler_name == "default-scheduler"
    ][:3]


def test_migrating_back_waits_for_pending_explanations(executor: MigrationExecutor) -> None:
    from datetime import UTC, datetime

    apps = migrate(executor, [("policy", "0024_pending_explanations")])
    cluster = apps.get_model("policy", "Cluster").objects.create(name="c", kind="demo")
    when = datetime(2026, 11, 25, tzinfo=UTC)
    snapshot = apps.get_model("policy", "ClusterSnapshot").snapshots.create(
        cluster=cluster, taken_at=when
    )
    decisions = apps.get_model("policy", "PlacementDecision")
    decision = _decision(decisions, cluster, when, "p", snapshot=snapshot, explanation_data=b"")
    pending = apps.get_model("policy", "PendingExplanation")
    pending.objects.create(decision=decision, snapshot=snapshot)
    with pytest.raises(RuntimeError, match="1 decisions have their explanation pending"):
        migrate(executor, [("policy", "0023_decisions_share_bases")])
    pending.objects.all().delete()
    migrate(executor, [("policy", "0023_decisions_share_bases")])
