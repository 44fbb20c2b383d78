"""Decisions answered before their explanation is written (policy.decisions.deferred): the
answer is the page the written decision gives, nothing is lost whoever writes it, and what is
written is the engine's explanation exactly."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from policy.clusters import services as cluster_services
from policy.clusters import snapshot_chains
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.decisions import deferred, evaluation
from policy.decisions.models import PendingExplanation, PlacementDecision
from policy.tasks import complete_explanations, prune_snapshots_task
from scoring import decision_codec
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def pod(name: str = "web-1", cpu: str = "100m") -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", {"cpu": cpu})])


def evaluate(api_client: Any, snapshot: ClusterSnapshot, query: str = "", **body: Any) -> Any:
    url = f"/api/v1/clusters/{snapshot.cluster_id}/evaluate/{query}"
    response = api_client.post(url, {"pod": pod(), **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def engine_json(snapshot: ClusterSnapshot, manifest: dict[str, Any]) -> dict[str, Any]:
    """What the engine says for ``manifest`` on ``snapshot``, evaluated afresh."""
    return evaluation.run(snapshot.cluster, manifest, on=snapshot)[0].to_dict()


@pytest.mark.parametrize("query", ["", "?nodes_offset=3&nodes_limit=4"])
def test_the_answer_is_the_page_the_written_decision_gives(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, monkeypatch: Any, query: str
) -> None:
    monkeypatch.setattr(decision_codec, "DEFAULT_RANKED", 3)  # a page that leaves nodes out
    api_client.force_login(viewer)
    answer = evaluate(api_client, demo_snapshot, query, pod=pod(cpu="6"))
    row = PlacementDecision.objects.get(pk=answer["id"])
    assert row.explanation_pending and PendingExplanation.objects.filter(decision=row).exists()

    stored = api_client.get(f"/api/v1/decisions/{answer['id']}/{query}")
    assert stored.status_code == 200
    assert not PendingExplanation.objects.exists()  # reading it wrote it
    body = stored.json()
    assert answer["nodes"] == body["explanation"]["nodes"]
    assert answer["nodesPage"] == body["nodes_page"]
    header = {k: v for k, v in body["explanation"].items() if k != "nodes"}
    assert {k: answer[k] for k in header} == header
    assert answer["nodesPage"]["omitted"] > 0


def test_the_process_that_made_it_writes_what_the_engine_decided(
    viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    row, made = evaluation.evaluate_and_record(demo_snapshot.cluster, pod(), defer=True)
    assert not row.explanation_data
    deferred.complete(row)
    assert not PendingExplanation.objects.exists()
    written = PlacementDecision.objects.get(pk=row.pk)
    assert written.explanation_base is not None
    assert written.explanation == made.to_dict() == engine_json(demo_snapshot, pod())


def test_another_process_evaluates_it_again_from_the_stored_inputs(
    demo_snapshot: ClusterSnapshot, monkeypatch: Any
) -> None:
    manifest = pod("again", cpu="2")
    row, made = evaluation.evaluate_and_record(demo_snapshot.cluster, manifest, defer=True)
    monkeypatch.setattr(deferred, "_held", type(deferred._held)())  # not this process's
    expected = made.to_dict()
    fresh = PlacementDecision.objects.get(pk=row.pk)
    assert fresh.explanation == expected  # read: evaluated again, written
    assert not PendingExplanation.objects.exists()
    assert PlacementDecision.objects.get(pk=row.pk).explanation == expected


def test_the_configuration_evaluated_is_the_one_kept_not_the_current_one(
    editor: User, api_client: Any, demo_snapshot: ClusterSnapshot, monkeypatch: Any
) -> None:
    """Edited between the answer and the writing, the configuration does not change what is
    written: the pending row keeps the document as evaluated."""
    api_client.force_login(editor)
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler"}],
    }
    made = api_client.post(
        "/api/v1/scheduler-configurations/import/",
        {"cluster": demo_snapshot.cluster_id, "document": json.dumps(document)},
        format="json",
    )
    assert made.status_code == 201, made.content
    answer = evaluate(api_client, demo_snapshot, pod=pod(cpu="2"))
    monkeypatch.setattr(deferred, "_held", type(deferred._held)())
    expected = engine_json(demo_snapshot, pod(cpu="2"))
    document["profiles"] = [{"schedulerName": "default-scheduler", "plugins": _no_scoring()}]
    imported = api_client.post(
        "/api/v1/scheduler-configurations/import/",
        {"cluster": demo_snapshot.cluster_id, "document": json.dumps(document)},
        format="json",
        HTTP_IF_MATCH="*",
    )
    assert imported.status_code in (200, 201), imported.content
    assert engine_json(demo_snapshot, pod(cpu="2")) != expected  # it does change the engine's
    assert PlacementDecision.objects.get(pk=answer["id"]).explanation == expected


def _no_scoring() -> dict[str, Any]:
    return {"score": {"disabled": [{"name": "*"}]}}


def test_the_beat_writes_only_those_left_behind(demo_snapshot: ClusterSnapshot) -> None:
    old, _ = evaluation.evaluate_and_record(demo_snapshot.cluster, pod("old"), defer=True)
    new, _ = evaluation.evaluate_and_record(demo_snapshot.cluster, pod("new"), defer=True)
    PendingExplanation.objects.filter(decision=old).update(
        created=timezone.now() - deferred.STALE_AFTER - timedelta(seconds=1)
    )
    assert complete_explanations() == 1
    assert list(PendingExplanation.objects.values_list("decision_id", flat=True)) == [new.pk]
    assert PlacementDecision.objects.get(pk=old.pk).explanation_data


def test_snapshot_retention_writes_pending_explanations_before_deleting(
    demo_snapshot: ClusterSnapshot, settings: Any
) -> None:
    row, made = evaluation.evaluate_and_record(demo_snapshot.cluster, pod(), defer=True)
    expected = made.to_dict()
    cluster_services.load_demo_cluster(nodes=12)  # a newer snapshot
    settings.SNAPSHOT_RETENTION = 1
    assert prune_snapshots_task() >= 1
    assert not ClusterSnapshot.snapshots.filter(pk=demo_snapshot.pk).exists()
    assert PlacementDecision.objects.get(pk=row.pk).explanation == expected


def test_a_snapshot_still_needed_is_kept_with_its_chain(demo_snapshot: ClusterSnapshot) -> None:
    cluster = demo_snapshot.cluster
    pinned = cluster_services.load_demo_cluster(nodes=12)
    for _ in range(2):
        cluster_services.load_demo_cluster(nodes=12)
    snapshot_chains.prune(cluster.pk, 1, pinned=[pinned.pk])
    kept = set(ClusterSnapshot.snapshots.filter(cluster=cluster).values_list("id", flat=True))
    assert pinned.pk in kept
    assert (pinned.keyframe_id or pinned.pk) in kept
    assert len(kept) < 4


def test_deleting_the_cluster_takes_pending_decisions_along(
    demo_snapshot: ClusterSnapshot,
) -> None:
    evaluation.evaluate_and_record(demo_snapshot.cluster, pod(), defer=True)
    Cluster.objects.filter(pk=demo_snapshot.cluster_id).delete()
    assert not PendingExplanation.objects.exists()
    assert not PlacementDecision.objects.exists()
