"""Managing the scheduler a cluster already runs, against the real kube-apiserver: the first
refresh adopts the configuration in its ConfigMap (Koordinator's chart, kept as written), a
dry-run then changes nothing, and editing one LoadAware threshold changes exactly that field of
the ConfigMap's document (apiVersion and leaderElection untouched)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.accounts.models import PolicyChange
from policy.clusters.gateway.connection import Connection
from policy.clusters.models import Cluster
from policy.core.choices import Role
from policy.policies.models import NodeThresholdPolicy, SchedulerConfiguration
from policy.sync import services as sync_services
from policy.sync.models import ClusterSyncState
from scoring.config.dump import leaves
from tests.gateway.kubeserver import KubeServer, create, ensure_namespaces
from tests.personas import create_user
from tests.policy.policy_api import ARGS, patch

NAMESPACE = "koordinator-system"
KEY = "koord-scheduler-config"
# The engine's inference (docs/scheduler-targets.md, "Inference").
DETECTED = {
    "koordinator-v1.5.0-v1beta3.yaml": "koord-scheduler@1.6",
    "koordinator-v1.7.0-v1.yaml": "koord-scheduler@1.8",
}
FIXTURES = Path(__file__).parents[1] / "scoring" / "fixtures" / "scheduler-configs"


def live_document(admin: Connection, name: str) -> Any:
    configmap = admin.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}")
    return yaml.safe_load(configmap["data"][KEY])


def _cluster(kube: KubeServer, admin: Connection, unique: Callable[[str], str], text: str) -> Any:
    ensure_namespaces(admin, [NAMESPACE])
    name = unique("koord-scheduler-config")
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "data": {KEY: text},
        },
    )
    return Cluster.objects.create(
        name=unique("adopt"),
        kind="kubeconfig",
        kubeconfig_path=str(kube.kubeconfig),
        kubeconfig_context="admin",
        scheduler_config_namespace=NAMESPACE,
        scheduler_config_name=name,
        scheduler_config_key=KEY,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fixture", ["koordinator-v1.5.0-v1beta3.yaml", "koordinator-v1.7.0-v1.yaml"]
)
def test_adopt_then_edit_one_threshold(
    fixture: str,
    kube: KubeServer,
    admin: Connection,
    unique: Callable[[str], str],
    run_on_commit: Any,
    push_now: Callable[[Cluster], Any],
    api_client: Any,
    editor: User,
) -> None:
    text = (FIXTURES / fixture).read_text()
    cluster = _cluster(kube, admin, unique, text)
    with run_on_commit():
        refresh = sync_services.refresh(cluster)
    refresh.refresh_from_db()
    assert refresh.status == "succeeded", refresh.log
    configuration = SchedulerConfiguration.objects.get(cluster=cluster)
    history = PolicyChange.objects.filter(object_id=configuration.pk, action="import")
    assert [c.message for c in history] == ["adopted from the cluster"]
    assert configuration.api_version == yaml.safe_load(text)["apiVersion"]
    cluster.refresh_from_db()
    assert cluster.detected_scheduler_target == DETECTED[fixture]

    dry_run = sync_services.plan(cluster)
    assert dry_run.status == "succeeded", dry_run.log
    assert dry_run.changes == []

    args = configuration.profiles.get(scheduler_name="koord-scheduler").loadaware_args
    thresholds = dict(args.usage_thresholds)
    api_client.force_login(editor)
    patch(
        api_client,
        f"{ARGS}{args.pk}/",
        {"usage_thresholds": {**thresholds, "cpu": thresholds["cpu"] - 10}},
        f'W/"{args.version}"',
    )
    before = leaves(live_document(admin, cluster.scheduler_config_name))
    job = push_now(cluster)
    assert job.status == "succeeded", job.log
    after = leaves(live_document(admin, cluster.scheduler_config_name))
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    (path,) = changed
    assert path.endswith("args.usageThresholds.cpu")
    assert after[path] == thresholds["cpu"] - 10
    assert after["apiVersion"] == before["apiVersion"]
    assert {p: v for p, v in after.items() if p.startswith("leaderElection")} == {
        p: v for p, v in before.items() if p.startswith("leaderElection")
    }


@pytest.mark.django_db
def test_the_schedulers_image_names_its_version(
    kube: KubeServer, admin: Connection, unique: Callable[[str], str], run_on_commit: Any
) -> None:
    """The Deployment that mounts the scheduler's ConfigMap runs koord-scheduler v1.6.1: that
    build is the cluster's target, more exact than what the document's apiVersion implies."""
    text = (FIXTURES / "koordinator-v1.7.0-v1.yaml").read_text()
    cluster = _cluster(kube, admin, unique, text)
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": unique("koord-scheduler"), "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": {"app": "koord-scheduler"}},
            "template": {
                "metadata": {"labels": {"app": "koord-scheduler"}},
                "spec": {
                    "containers": [
                        {
                            "name": "scheduler",
                            "image": "ghcr.io/koordinator-sh/koord-scheduler:v1.6.1",
                        }
                    ],
                    "volumes": [
                        {"name": "config", "configMap": {"name": cluster.scheduler_config_name}}
                    ],
                },
            },
        },
    }
    create(admin, deployment)
    path = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{deployment['metadata']['name']}"
    try:
        with run_on_commit():
            refresh = sync_services.refresh(cluster)
        refresh.refresh_from_db()
        assert refresh.status == "succeeded", refresh.log
        cluster.refresh_from_db()
        assert cluster.detected_scheduler_target == "koord-scheduler@1.6"
        assert "koord-scheduler:v1.6.1" in refresh.log
    finally:
        admin.request("DELETE", path)


@pytest.mark.django_db
def test_a_push_that_leaves_the_adopted_document_alone_reports_no_drift(
    kube: KubeServer,
    admin: Connection,
    unique: Callable[[str], str],
    run_on_commit: Any,
    push_now: Callable[[Cluster], Any],
    scratch_nodes: Callable[..., list[str]],
) -> None:
    """The chart's text keeps its own layout and comments: a push of node thresholds does not
    rewrite it, and the next refresh must not call that text drift."""
    text = (FIXTURES / "koordinator-v1.7.0-v1.yaml").read_text()
    cluster = _cluster(kube, admin, unique, text)
    [node] = scratch_nodes(1)

    def refresh() -> Any:
        with run_on_commit():
            job = sync_services.refresh(cluster)
        job.refresh_from_db()
        assert job.status == "succeeded", job.log
        return job

    refresh()  # adopts the chart's document
    NodeThresholdPolicy.objects.create(
        cluster=cluster, name="pinned", node_names=[node], usage_thresholds={"cpu": 70}
    )
    pushed = push_now(cluster)
    assert pushed.status == "succeeded", pushed.log
    assert [c["kind"] for c in pushed.changes] == ["Node"]  # the ConfigMap was not rewritten
    assert live_document(admin, cluster.scheduler_config_name) == yaml.safe_load(text)
    refresh()
    state = ClusterSyncState.objects.get(cluster=cluster)
    assert state.drift == []


@pytest.mark.django_db
def test_a_refresh_that_finds_no_configuration_at_the_key_says_so(
    kube: KubeServer, admin: Connection, unique: Callable[[str], str], run_on_commit: Any
) -> None:
    """The ConfigMap exists but holds its document under another key: nothing is adopted, and
    the job's log (the Sync page shows it) names the place read."""
    cluster = _cluster(kube, admin, unique, "{}")
    Cluster.objects.filter(pk=cluster.pk).update(scheduler_config_key="config.yaml")
    cluster.refresh_from_db()
    with run_on_commit():
        job = sync_services.refresh(cluster)
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    assert not SchedulerConfiguration.objects.filter(cluster=cluster).exists()
    place = f"{NAMESPACE}/{cluster.scheduler_config_name}:config.yaml"
    assert f"no scheduler configuration at {place}: nothing adopted" in job.log
    # The Sync page says so, without opening the job.
    [note] = job.notes
    assert note.startswith(f"no scheduler configuration at {place}: nothing adopted")
    client = Client()
    client.force_login(create_user("vera", Role.VIEWER))
    html = client.get(f"/clusters/{cluster.pk}/sync/").content.decode()
    assert f'The last refresh (<a href="/clusters/{cluster.pk}/sync/jobs/{job.pk}/">' in html
    assert f"No scheduler configuration at {place}: nothing adopted" in html
