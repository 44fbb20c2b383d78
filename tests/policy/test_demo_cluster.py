"""Loading the demo cluster, the admin account, snapshot summaries and pruning."""

from __future__ import annotations

from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from policy import tasks
from policy.accounts.models import PolicyChange
from policy.clusters import services as cluster_services
from policy.clusters.engine import clear_caches, engine_for, snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.snapshots import summarize
from policy.decisions import retention
from policy.policies.models import SchedulerConfiguration
from policy.web.presenters.loadaware import ClusterLoad, cluster_load, default_plugin
from scoring.snapshot import Snapshot
from tests.conftest import NOW

pytestmark = pytest.mark.django_db


def test_load_demo_cluster_command_stores_60_nodes() -> None:
    out = StringIO()
    call_command("load_demo_cluster", stdout=out)
    snapshot = ClusterSnapshot.snapshots.get()
    assert snapshot.cluster.name == "demo" and snapshot.cluster.kind == "demo"
    assert snapshot.counts() == {
        "nodes": 60,
        "pods": 480,
        "pending_pods": 12,
        "node_metrics": 59,
        "node_resource_topologies": 4,
    }
    assert len(snapshot.objects) == 60 + 492 + 59 + 4
    assert "60 nodes, 480 bound and 12 pending pods" in out.getvalue()


def test_the_command_stores_demo_policies_once_that_serve_every_demo_pod() -> None:
    clear_caches()
    out = StringIO()
    call_command("load_demo_cluster", "--nodes", "8", stdout=out)
    call_command("load_demo_cluster", "--nodes", "8", stdout=out)
    configuration = SchedulerConfiguration.objects.get()
    assert [p.scheduler_name for p in configuration.profiles.all()] == [
        "default-scheduler",
        "batch-scheduler",
    ]
    assert out.getvalue().count("Stored the demo scheduler configuration") == 1
    created = PolicyChange.objects.filter(source="system", action="create")
    # The configuration, 2 profiles and their LoadAware args, a node threshold policy, the
    # descheduler configuration and koordlet's thresholds.
    assert created.count() == 8
    engine = engine_for(configuration.to_document())
    pending = snapshot_for(ClusterSnapshot.snapshots.summaries().latest()).pending
    assert pending and all(engine.framework_for(pod) for pod in pending)
    call_command("load_demo_cluster", "--name", "bare", "--no-policies", stdout=out)
    assert not SchedulerConfiguration.objects.filter(cluster__name="bare").exists()


def test_loading_again_adds_a_snapshot_to_the_same_cluster() -> None:
    cluster_services.load_demo_cluster(nodes=5, now=NOW)
    latest = cluster_services.load_demo_cluster(nodes=5, now=NOW + timedelta(minutes=5))
    assert Cluster.objects.count() == 1
    assert latest.cluster.latest_snapshot() == latest
    assert ClusterSnapshot.snapshots.count() == 2


def _load_at(snapshot: Any, now: datetime) -> ClusterLoad:
    engine_view = Snapshot.from_objects(snapshot.objects)
    return cluster_load(engine_view, default_plugin(), now, origin="defaults", profile=None)


def test_the_dashboard_judges_freshness_at_snapshot_time(demo_snapshot: Any) -> None:
    at_snapshot = _load_at(demo_snapshot, demo_snapshot.taken_at)
    assert at_snapshot.metrics == {"fresh": 9, "expired": 2, "missing": 1}
    later = _load_at(demo_snapshot, demo_snapshot.taken_at + timedelta(hours=1))
    assert later.metrics == {"fresh": 0, "expired": 11, "missing": 1}
    assert at_snapshot.over("cpu") >= 1


def test_an_unreadable_snapshot_is_still_counted(demo_snapshot: Any) -> None:
    objects = [
        *demo_snapshot.objects,
        {"kind": "Node", "metadata": {"name": "bad"}, "status": {"allocatable": {"cpu": "x"}}},
    ]
    summary = summarize(objects)
    assert (summary.nodes, summary.pods_bound, summary.pods_pending) == (12, 480 // 5, 12)
    assert len(summary.problems) == 1 and "bad" in summary.problems[0]


def test_prune_keeps_the_newest_snapshots_per_cluster(celery_eager: None) -> None:
    for minute in range(4):
        cluster_services.load_demo_cluster(nodes=2, now=NOW + timedelta(minutes=minute))
    cluster_services.load_demo_cluster(name="other", nodes=2, now=NOW)
    assert cluster_services.prune_snapshots(keep=2) == 2
    remaining = ClusterSnapshot.snapshots.filter(cluster__name="demo")
    assert [s.taken_at for s in remaining] == [NOW + timedelta(minutes=m) for m in (3, 2)]
    assert ClusterSnapshot.snapshots.filter(cluster__name="other").count() == 1
    assert tasks.prune_snapshots_task.delay().get() == 0


def test_ensure_admin_is_idempotent(settings: Any, tmp_path: Path) -> None:
    settings.VAR_DIR = tmp_path
    first = StringIO()
    call_command("ensure_admin", stdout=first)
    password = first.getvalue().split("password: ")[1].split()[0]
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)
    assert (tmp_path / "admin-password").stat().st_mode & 0o077 == 0
    second = StringIO()
    call_command("ensure_admin", stdout=second)
    assert "already exists" in second.getvalue()
    assert f"password: {password}" in second.getvalue()
    assert User.objects.filter(username="admin").count() == 1
    admin.set_password("changed-elsewhere")
    admin.save()
    third = StringIO()
    call_command("ensure_admin", stdout=third)
    assert "password:" not in third.getvalue() and "changepassword admin" in third.getvalue()


def test_ensure_admin_uses_the_given_password(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VAR_DIR = tmp_path
    monkeypatch.setenv("SCHEDBOARD_ADMIN_PASSWORD", "demo-password-123")
    call_command("ensure_admin", "--username", "boss", stdout=StringIO())
    assert User.objects.get(username="boss").check_password("demo-password-123")


def test_a_kubeconfig_cluster_needs_a_path() -> None:
    from django.core.exceptions import ValidationError
    from django.db import IntegrityError, transaction

    with pytest.raises(ValidationError, match="kubeconfig path"):
        Cluster(name="prod", kind="kubeconfig").full_clean()
    with pytest.raises(ValidationError, match="Only kubeconfig clusters"):
        Cluster(name="demo2", kind="demo", kubeconfig_path="/x").full_clean()
    with pytest.raises(IntegrityError), transaction.atomic():
        Cluster.objects.create(name="prod", kind="kubeconfig")


def test_prune_drops_old_decisions_and_caps_each_cluster(
    demo_snapshot: Any, settings: Any, celery_eager: None
) -> None:
    from policy.decisions.models import PlacementDecision
    from policy.decisions.services import evaluate_pod
    from tests.scoring.builders import make_container, make_pod

    cluster = demo_snapshot.cluster
    for n in range(5):
        evaluate_pod(cluster, make_pod(f"p{n}", containers=[make_container("a", {"cpu": "1"})]))
    decisions = PlacementDecision.objects.filter(cluster=cluster).order_by("-created", "-id")
    newest = list(decisions.values_list("id", flat=True))
    PlacementDecision.objects.filter(id=newest[-1]).update(created=NOW - timedelta(days=31))
    settings.DECISION_RETENTION_COUNT = 3
    assert retention.prune_decisions(now=NOW) == 2  # one too old, one beyond the newest 3
    assert list(decisions.values_list("id", flat=True)) == newest[:3]
    assert tasks.prune_decisions_task.delay().get() == 0
