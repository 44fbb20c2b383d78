"""Big clusters: the dashboard shows the previous snapshot while the newest one is built in the
background."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.services import load_demo_cluster
from policy.core import broker
from tests.conftest import NOW


def wait_until(check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_the_previous_snapshot_is_shown_while_the_newest_is_built(
    client: Client, settings: Any, make_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the worker has not prepared the newest snapshot yet (with no broker it prepares it
    at once, in this process: held back here)."""
    monkeypatch.setattr(broker, "prepare_views", lambda cluster_id: None)
    settings.DASHBOARD_BACKGROUND_BUILD_NODES = 10
    client.force_login(make_user("val", "viewer"))
    first = load_demo_cluster(nodes=12, now=NOW)
    response = client.get("/")
    assert response.context["snapshot"].pk == first.pk  # a first visit builds inline
    assert response.context["preparing"] is None

    newest = load_demo_cluster(nodes=12, now=NOW + timedelta(minutes=1))
    response = client.get("/")
    assert response.context["snapshot"].pk == first.pk
    assert response.context["preparing"].pk == newest.pk
    assert "the newest one (taken" in response.content.decode()
    assert 'data-poll="2"' in response.content.decode()

    def ready() -> bool:  # what the page's script polls
        status = client.get("/", HTTP_X_PARTIAL="status").content.decode()
        return 'data-job-status="succeeded"' in status

    wait_until(ready)
    response = client.get("/")
    assert response.context["preparing"] is None
    assert "is being prepared" not in response.content.decode()


@pytest.mark.django_db
def test_small_clusters_always_show_the_newest(client: Client, viewer: User, settings: Any) -> None:
    settings.DASHBOARD_BACKGROUND_BUILD_NODES = 1000
    client.force_login(viewer)
    load_demo_cluster(nodes=12, now=NOW)
    client.get("/")
    newest = load_demo_cluster(nodes=12, now=NOW + timedelta(minutes=1))
    response = client.get("/")
    assert response.context["snapshot"].pk == newest.pk and response.context["preparing"] is None
