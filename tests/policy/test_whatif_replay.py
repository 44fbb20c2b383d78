"""What-if replays the cluster's history: the bindings its scheduler made between two times
(recorded decisions of source ``cluster``), in order, from the snapshot before the first, under
both configurations; the report says how many of those pods each places elsewhere than the
scheduler did."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.engine import snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.services import record_snapshot
from policy.core.choices import DecisionSource, WhatIfStatus
from policy.decisions import evaluation, services, whatif
from policy.decisions.models import PlacementDecision
from tests.conftest import NOW

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

DEFAULTS = whatif.ConfigurationInput("defaults")
PACKING = whatif.ConfigurationInput(
    "custom",
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
    "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
    "    args: {scoringStrategy: {type: MostAllocated}}\n",
)
LATER = NOW + timedelta(minutes=10)


def bind(cluster: Cluster, stored: ClusterSnapshot, pod: Any, agree: bool) -> PlacementDecision:
    """Record that the cluster's scheduler bound ``pod`` (decided on ``stored``) where the
    engine would, or elsewhere."""
    manifest = dict(pod.raw)
    decided = evaluation.run(cluster, manifest, on=stored)
    chosen = decided.selected_node
    assert chosen is not None
    names = [n for n in snapshot_for(stored).node_names if n != chosen]
    actual = chosen if agree else names[0]
    evaluated = evaluation.run(cluster, manifest, on=stored, actual_node=actual)
    return services.record(
        cluster, manifest, evaluated, digest=f"{pod.key}@{actual}", source=DecisionSource.CLUSTER
    )


@pytest.fixture
def history(demo_snapshot: ClusterSnapshot) -> tuple[Cluster, ClusterSnapshot, ClusterSnapshot]:
    """Two bindings: one where the engine would have put it (decided on the demo snapshot),
    one elsewhere (decided on a later snapshot)."""
    cluster = demo_snapshot.cluster
    later = record_snapshot(cluster, list(demo_snapshot.objects), LATER)
    small = [p for p in snapshot_for(demo_snapshot).pending if p.requests.get("cpu", 0) < 2000]
    bind(cluster, demo_snapshot, small[0], agree=True)
    bind(cluster, later, small[1], agree=False)
    return cluster, demo_snapshot, later


def replay(cluster: Cluster, start: Any, end: Any, candidate: Any = DEFAULTS) -> Any:
    run = whatif.start(
        cluster,
        workload_source="history",
        workload="",
        baseline=DEFAULTS,
        candidate=candidate,
        replay_from=start,
        replay_until=end,
    )
    assert whatif.execute(run.pk) == WhatIfStatus.SUCCEEDED, run.error
    run.refresh_from_db()
    return run


def test_a_binding_where_the_engine_would_put_it_is_not_elsewhere(history: Any) -> None:
    cluster, first, _ = history
    run = replay(cluster, NOW - timedelta(minutes=1), NOW + timedelta(minutes=1))
    assert run.snapshot_id == first.pk and run.pod_count == 1
    assert run.result["replay"] == {
        "bindings": 1,
        "from": NOW.isoformat(),
        "snapshot": first.pk,
        "elsewhere": [0, 0],
    }


def test_the_whole_window_replays_in_order_from_the_snapshot_before_the_first(
    history: Any,
) -> None:
    cluster, first, _ = history
    run = replay(cluster, NOW - timedelta(minutes=1), LATER + timedelta(minutes=1), PACKING)
    assert run.snapshot_id == first.pk and run.pod_count == 2
    replayed = run.result["replay"]
    assert replayed["bindings"] == 2
    assert replayed["elsewhere"][0] >= 1  # the scheduler put the second pod elsewhere
    assert run.replay_from is not None and run.replay_until is not None
    only_later = replay(cluster, LATER, LATER + timedelta(minutes=1))
    assert only_later.snapshot_id != first.pk
    assert only_later.result["replay"]["elsewhere"][0] == 1


def test_a_window_without_bindings_or_backwards_is_refused_naming_the_field(
    history: Any,
) -> None:
    cluster, _, _ = history

    def errors(start: Any, end: Any) -> dict[str, list[str]]:
        with pytest.raises(whatif.WhatIfInvalid) as caught:
            replay(cluster, start, end)
        return caught.value.errors

    assert "replay_from" in errors(None, NOW)
    assert "replay_until" in errors(NOW, NOW)
    empty = errors(NOW + timedelta(days=1), NOW + timedelta(days=2))
    assert empty["replay_from"] == [
        "the cluster's scheduler made no recorded binding in that window"
    ]


def test_the_api_replays_and_reports(api_client: Any, editor: User, history: Any) -> None:
    cluster, first, _ = history
    api_client.force_login(editor)
    body = {
        "cluster": cluster.pk,
        "workload_source": "history",
        "replay_from": (NOW - timedelta(minutes=1)).isoformat(),
        "replay_until": (LATER + timedelta(minutes=1)).isoformat(),
        "baseline": {"source": "defaults"},
        "candidate": {"source": "defaults"},
    }
    response = api_client.post("/api/v1/what-if/", body, format="json")
    assert response.status_code == 202, response.content
    created = response.json()
    assert created["workload_source"] == "history" and created["snapshot"] == first.pk
    assert created["pod_count"] == 2
    refused = api_client.post(
        "/api/v1/what-if/", {**body, "replay_from": body["replay_until"]}, format="json"
    )
    assert refused.status_code == 400 and "replay_until" in refused.json()


def test_the_page_replays_and_shows_where_the_scheduler_disagreed(
    client: Any, editor: User, history: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.urls import reverse

    cluster, _, _ = history
    client.force_login(editor)
    data = {
        "cluster": str(cluster.pk),
        "workload_source": "history",
        "replay_from": (NOW - timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M"),
        "replay_until": (LATER + timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M"),
        "baseline_source": "defaults",
        "candidate_source": "defaults",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("whatif-list"), data)
    assert response.status_code == 302, response.context["form"].errors
    page = client.get(response["Location"]).content.decode()
    assert "placed elsewhere than the cluster's scheduler did" in page
    assert "1 of 2" in page.split("data-replay", 1)[1].split("</tr>", 1)[0]
    backwards = client.post(reverse("whatif-list"), {**data, "replay_from": data["replay_until"]})
    assert backwards.status_code == 200
    assert backwards.context["form"].errors["replay_until"] == ["must be later than replay_from"]
