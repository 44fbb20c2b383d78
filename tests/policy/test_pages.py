"""Pages: login required everywhere but the exemptions; the dashboard shows the snapshot."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import Cluster
from tests.personas import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/", "/?sort=cpu", "/api/docs/", "/admin/"])
def test_pages_redirect_anonymous_users_to_login(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/") or "login" in response["Location"]


def test_login_page(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b"<title>Log in \xc2\xb7 schedboard</title>" in response.content


def test_log_in_and_out(client: Client, viewer: User, demo_snapshot: Any) -> None:
    response = client.post(
        "/accounts/login/", {"username": "vera", "password": PASSWORD}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/"
    assert b"Cluster demo" in response.content
    assert b"Log out" in response.content
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert client.get("/").status_code == 302


def test_wrong_password_is_refused(client: Client, viewer: User) -> None:
    response = client.post("/accounts/login/", {"username": "vera", "password": "nope"})
    assert response.status_code == 200
    assert b"didn't match" in response.content


def test_dashboard_summarizes_the_snapshot(
    client: Client, viewer: User, demo_snapshot: Any
) -> None:
    client.force_login(viewer)
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>demo — Dashboard · schedboard</title>" in html
    summary = response.context["summary"]
    assert summary.nodes == 12
    assert summary.pods_bound == 96 and summary.pods_pending == 12
    assert summary.metrics == {"fresh": 9, "expired": 2, "missing": 1}
    assert len(re.findall(r'<tr(?: class="cordoned")?>\s*<th scope="row">', html)) == 12
    assert "vera · viewer" in html


def test_dashboard_sorts_the_node_table(client: Client, viewer: User, demo_snapshot: Any) -> None:
    client.force_login(viewer)
    rows = client.get("/?sort=-cpu_used").context["rows"]
    measured = [row.cpu_used for row in rows if row.cpu_used is not None]
    assert measured == sorted(measured, reverse=True)
    assert rows[-1].cpu_used is None  # the node without a NodeMetric sorts last
    names = [row.name for row in client.get("/?sort=bogus").context["rows"]]
    assert names == sorted(names)


def test_dashboard_without_clusters(client: Client, viewer: User) -> None:
    client.force_login(viewer)
    response = client.get("/")
    assert response.status_code == 200
    assert b"load_demo_cluster" in response.content


def test_dashboard_picks_a_cluster(client: Client, viewer: User, demo_snapshot: Any) -> None:
    other = Cluster.objects.create(name="empty")
    client.force_login(viewer)
    response = client.get(f"/?cluster={other.pk}")
    assert b"has no snapshot yet" in response.content
    assert client.get("/?cluster=999").status_code == 404
    assert client.get("/?cluster=abc").status_code == 404


def test_dashboard_needs_a_role(client: Client, nobody: User) -> None:
    client.force_login(nobody)
    response = client.get("/")
    assert response.status_code == 403
    assert b"needs the viewer role" in response.content


def test_dashboard_survives_unreadable_objects(client: Client, viewer: User) -> None:
    from policy.clusters.services import record_snapshot

    cluster = Cluster.objects.create(name="broken", kind="in-cluster")
    record_snapshot(
        cluster,
        [
            {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "x"}}},
            {"kind": "Node", "metadata": {}},
            {"kind": "NodeMetric", "metadata": {"name": "n1"}, "status": {"updateTime": "never"}},
            {"kind": "NodeMetric", "metadata": [], "status": "broken"},
            {"kind": "Pod", "spec": ["not", "a", "map"], "status": None},
            "not an object",
        ],
        taken_at=demo_time(),
    )
    client.force_login(viewer)
    response = client.get(f"/?cluster={cluster.pk}")
    assert response.status_code == 200
    assert len(response.context["summary"].problems) == 3


def demo_time() -> Any:
    from tests.conftest import NOW

    return NOW


def test_api_docs_page_for_logged_in_users(client: Client, viewer: User) -> None:
    client.force_login(viewer)
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def test_schema_is_served_to_authenticated_clients_only(client: Client, viewer: User) -> None:
    assert client.get("/api/schema/").status_code == 401
    client.force_login(viewer)
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert "/api/v1/clusters/{id}/sync/" in response.json()["paths"]
