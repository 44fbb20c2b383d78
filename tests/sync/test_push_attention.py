"""Push safety: a dry-run marks scheduler configuration changes that can break the scheduler
(leaderElection, clientConnection, a removed profile or plugin, a changed schedulerName), and
confirming such a plan needs an explicit acknowledgement, from the API and the sync page."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import ClusterSnapshot
from policy.sync.attention import scheduler_attention
from policy.sync.models import ClusterSyncState, SyncJob, SyncJobKind, SyncJobTrigger
from tests.policy.builders import unpushed_policies

KOORD = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": True, "resourceName": "koord-scheduler"},
    "clientConnection": {"qps": 50},
    "profiles": [
        {
            "schedulerName": "koord-scheduler",
            "plugins": {
                "score": {"enabled": [{"name": "LoadAwareScheduling"}, {"name": "Reservation"}]}
            },
        },
        {"schedulerName": "batch"},
    ],
}


def _text(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False)


def test_an_edit_of_nothing_risky_needs_no_attention() -> None:
    edited = {**KOORD, "parallelism": 8}
    assert scheduler_attention(_text(KOORD), _text(edited)) == []
    assert scheduler_attention(None, _text(KOORD)) == []  # nothing there before


def test_each_risky_change_is_named() -> None:
    fit = {"name": "NodeResourcesFit"}
    profile = {
        "schedulerName": "koord-scheduler",
        "plugins": {"score": {"enabled": [{"name": "LoadAwareScheduling"}]}},
    }
    edited = {
        "apiVersion": KOORD["apiVersion"],
        "kind": KOORD["kind"],
        "clientConnection": {"qps": 100},
        "profiles": [profile],
    }
    assert scheduler_attention(_text(KOORD), _text(edited)) == [
        "leaderElection removed",
        "clientConnection changed",
        "profile koord-scheduler: plugin Reservation removed from score",
        "profile batch removed",
    ]
    batch = {"schedulerName": "batch", "plugins": {"multiPoint": {"disabled": [fit]}}}
    disabled = {**KOORD, "profiles": [KOORD["profiles"][0], batch]}
    assert scheduler_attention(_text(KOORD), _text(disabled)) == [
        "profile batch: plugin NodeResourcesFit disabled at multiPoint"
    ]
    renamed = {**KOORD, "profiles": [{**KOORD["profiles"][0], "schedulerName": "x"}]}
    reasons = scheduler_attention(_text(KOORD), _text(renamed))
    assert "profiles[0].schedulerName changed: koord-scheduler -> x" in reasons


@pytest.fixture
def planned(demo_snapshot: ClusterSnapshot) -> Any:
    """A cluster whose scheduler ConfigMap holds koord-scheduler's configuration (leader
    election on its own lease) while the stored configuration has no leaderElection."""
    policy = unpushed_policies(demo_snapshot.cluster, ["general-a-0003"])
    state, _ = ClusterSyncState.objects.get_or_create(cluster=policy.cluster)
    state.scheduler_config = _text(KOORD)
    state.save()
    return policy.cluster


@pytest.mark.django_db
def test_the_api_refuses_an_unacknowledged_risky_plan(
    planned: Any, api_client: Any, operator: User, run_on_commit: Any
) -> None:
    api_client.force_login(operator)
    base = f"/api/v1/clusters/{planned.pk}"
    plan = api_client.post(f"{base}/sync/plan/").json()
    (config,) = [c for c in plan["changes"] if c["kind"] == "ConfigMap"]
    assert "leaderElection removed" in config["attention"]
    assert "leaderElection" not in yaml.safe_load(config["after"])  # never added
    assert all(c["attention"] == [] for c in plan["changes"] if c["kind"] == "Node")
    with run_on_commit():
        refused = api_client.post(f"{base}/sync/", {"plan": plan["id"]}, format="json")
    assert refused.status_code == 400
    assert "leaderElection removed" in refused.json()["acknowledge_attention"][0]
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()
    with run_on_commit():
        done = api_client.post(
            f"{base}/sync/", {"plan": plan["id"], "acknowledge_attention": True}, format="json"
        )
    assert done.status_code == 202, done.content


@pytest.mark.django_db
def test_the_sync_page_asks_for_the_acknowledgement(
    planned: Any, client: Client, operator: User, run_on_commit: Any
) -> None:
    client.force_login(operator)
    base = f"/clusters/{planned.pk}/sync"
    review = client.get(client.post(f"{base}/plan/")["Location"])
    html = review.content.decode()
    assert "Needs attention" in html and "leaderElection removed" in html
    assert 'name="acknowledge_attention"' in html
    plan = review.context["plan"].pk
    with run_on_commit():
        refused = client.post(f"{base}/push/", {"plan": plan})
    assert refused.status_code == 400 and "Not pushed" in refused.content.decode()
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()
    fresh = refused.context["plan"].pk
    with run_on_commit():
        pushed = client.post(f"{base}/push/", {"plan": fresh, "acknowledge_attention": "on"})
    assert pushed.status_code == 302
    assert SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()


@pytest.mark.django_db
def test_an_automatic_push_never_writes_a_risky_change(planned: Any, run_on_commit: Any) -> None:
    from policy.sync import services as sync_services

    with run_on_commit():
        job = sync_services.push(planned, trigger=SyncJobTrigger.AUTOMATIC)
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    assert any("needs attention (leaderElection removed" in note for note in job.notes)
    assert [c["kind"] for c in job.changes] == ["Node"]  # the node thresholds still go out
    state = ClusterSyncState.objects.get(cluster=planned)
    assert yaml.safe_load(state.scheduler_config or "") == KOORD  # the ConfigMap's untouched
