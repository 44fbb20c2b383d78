"""Decisions made on one snapshot share a base: stored once, read back exactly, kept while a
decision needs it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from policy.clusters.models import ClusterSnapshot
from policy.clusters.services import record_snapshot
from policy.clusters.snapshot_chains import materialize
from policy.decisions import retention, services
from policy.decisions.models import ExplanationBase, PlacementDecision
from policy.decisions.models import decisions as decision_models
from tests.conftest import NOW, engine_decision
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def pod(name: str, cpu: str) -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", {"cpu": cpu})])


def engine_json(stored: ClusterSnapshot, manifest: dict[str, Any]) -> dict[str, Any]:
    """The engine's JSON for ``manifest`` on ``stored``, computed apart from any record."""
    return engine_decision(stored, manifest).to_dict()


def fresh(decision: PlacementDecision) -> PlacementDecision:
    """The row read again by a process that holds no decoded base."""
    decision_models._bases.clear()
    return PlacementDecision.objects.get(pk=decision.pk)


def test_decisions_on_a_snapshot_share_its_base_and_come_back_exactly(
    demo_snapshot: ClusterSnapshot,
) -> None:
    cluster = demo_snapshot.cluster
    manifests = [pod("a", "100m"), pod("b", "6"), pod("c", "1000")]
    rows = [services.evaluate_pod(cluster, m) for m in manifests]
    assert ExplanationBase.objects.count() == 1
    base = ExplanationBase.objects.get()
    assert base.snapshot == demo_snapshot and {r.explanation_base for r in rows} == {base}
    for row, manifest in zip(rows, manifests, strict=True):
        assert fresh(row).explanation == engine_json(demo_snapshot, manifest)
    first = len(bytes(rows[0].explanation_data))
    assert first * 10 < len(bytes(base.data))  # the first decision is its base

    newer = record_snapshot(cluster, materialize(demo_snapshot), NOW + timedelta(minutes=1))
    later = services.evaluate_pod(cluster, pod("d", "100m"))
    assert later.snapshot == newer and later.explanation_base != base
    assert ExplanationBase.objects.count() == 2
    assert fresh(later).explanation == engine_json(newer, pod("d", "100m"))


def test_a_page_of_nodes_reads_through_the_base(
    api_client: Any, viewer: Any, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    manifest = pod("web", "6")
    services.evaluate_pod(demo_snapshot.cluster, pod("first", "100m"))
    row = services.evaluate_pod(demo_snapshot.cluster, manifest)
    decision_models._bases.clear()
    body = api_client.get(f"/api/v1/decisions/{row.pk}/", {"nodes_offset": 3}).json()
    assert body["explanation"]["nodes"] == engine_json(demo_snapshot, manifest)["nodes"][3:]


def test_retention_keeps_a_base_while_a_decision_needs_it(
    demo_snapshot: ClusterSnapshot, settings: Any
) -> None:
    cluster = demo_snapshot.cluster
    old, kept = (services.evaluate_pod(cluster, pod(n, "100m")) for n in ("old", "kept"))
    PlacementDecision.objects.filter(pk=old.pk).update(created=NOW - timedelta(days=400))
    ExplanationBase.objects.update(created=NOW - timedelta(days=400))
    assert retention.prune_decisions(now=NOW) == 1
    assert ExplanationBase.objects.count() == 1  # "kept" still needs it
    assert fresh(kept).explanation == engine_json(demo_snapshot, pod("kept", "100m"))

    settings.DECISION_RETENTION_COUNT = 0
    retention.prune_decisions(now=NOW)
    assert not PlacementDecision.objects.exists() and not ExplanationBase.objects.exists()


def test_an_unused_base_gets_an_hours_grace(demo_snapshot: ClusterSnapshot) -> None:
    row = services.evaluate_pod(demo_snapshot.cluster, pod("a", "100m"))
    row.delete()
    retention.prune_decisions(now=NOW)
    assert ExplanationBase.objects.count() == 1
    retention.prune_decisions(now=ExplanationBase.objects.get().created + timedelta(hours=2))
    assert not ExplanationBase.objects.exists()


def test_deleting_a_cluster_deletes_its_decisions_and_bases(
    demo_snapshot: ClusterSnapshot,
) -> None:
    services.evaluate_pod(demo_snapshot.cluster, pod("a", "100m"))
    demo_snapshot.cluster.delete()
    assert not PlacementDecision.objects.exists() and not ExplanationBase.objects.exists()
