"""The scheduler target on the cluster's sync page: shown to everyone, set by operators."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import Cluster, ClusterSnapshot

pytestmark = pytest.mark.django_db


def test_operators_set_the_target_from_the_sync_page(
    client: Client, operator: User, demo_snapshot: ClusterSnapshot
) -> None:
    cluster = demo_snapshot.cluster
    client.force_login(operator)
    page = client.get(f"/clusters/{cluster.pk}/sync/").content.decode()
    assert "Scheduler target: <strong>inferred from the configuration</strong>" in page
    assert 'name="scheduler_flavor"' in page
    url = f"/clusters/{cluster.pk}/sync/target/"
    done = client.post(url, {"scheduler_flavor": "koord-scheduler", "scheduler_version": "1.7"})
    assert done.status_code == 302
    cluster = Cluster.objects.get(pk=cluster.pk)
    assert str(cluster.scheduler_target()) == "koord-scheduler@1.7"
    page = client.get(done["Location"]).content.decode()
    assert "koord-scheduler@1.7</strong> (set here)" in page
    refused = client.post(url, {"scheduler_flavor": "kube-scheduler", "scheduler_version": "x"})
    page = client.get(refused["Location"]).content.decode()
    assert "scheduler_version" in page and "not major.minor" in page
    assert str(Cluster.objects.get(pk=cluster.pk).scheduler_target()) == "koord-scheduler@1.7"


def test_viewers_see_the_target_but_cannot_set_it(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    cluster = demo_snapshot.cluster
    client.force_login(viewer)
    page = client.get(f"/clusters/{cluster.pk}/sync/").content.decode()
    assert "Scheduler target:" in page and 'name="scheduler_flavor"' not in page
    refused = client.post(f"/clusters/{cluster.pk}/sync/target/", {"scheduler_flavor": "custom"})
    assert refused.status_code == 403
    assert Cluster.objects.get(pk=cluster.pk).scheduler_flavor == ""
