"""Each role's allowed and forbidden API actions."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import Cluster

pytestmark = pytest.mark.django_db

READ_ROLES = ["viewer", "editor", "operator", "superuser"]


def login(api_client: Any, request: pytest.FixtureRequest, persona: str) -> User:
    user: User = request.getfixturevalue(persona)
    api_client.force_authenticate(user=None)
    api_client.force_login(user)
    return user


@pytest.mark.parametrize("persona", READ_ROLES)
def test_every_role_reads_clusters(
    api_client: Any, request: pytest.FixtureRequest, persona: str, demo_snapshot: Any
) -> None:
    login(api_client, request, persona)
    response = api_client.get("/api/v1/clusters/")
    assert response.status_code == 200
    (cluster,) = response.json()["results"]
    assert cluster["name"] == "demo"
    assert cluster["latest_snapshot"]["node_count"] == 12
    detail = api_client.get(f"/api/v1/clusters/{cluster['id']}/")
    assert detail.status_code == 200


def test_a_user_without_a_role_reads_nothing(api_client: Any, nobody: User) -> None:
    api_client.force_login(nobody)
    response = api_client.get("/api/v1/clusters/")
    assert response.status_code == 403
    assert "viewer role" in response.json()["detail"]


def test_anonymous_gets_401_with_a_challenge(api_client: Any, db: None) -> None:
    response = api_client.get("/api/v1/clusters/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


def test_only_superusers_connect_clusters(api_client: Any, superuser: User, operator: User) -> None:
    api_client.force_login(operator)
    refused = api_client.post("/api/v1/clusters/", {"name": "x"})
    assert refused.status_code == 403 and "superuser" in refused.json()["detail"]
    api_client.force_login(superuser)
    invalid = api_client.post("/api/v1/clusters/", {"name": "x"})  # no kind
    assert invalid.status_code == 400 and "kind" in invalid.json()


@pytest.mark.parametrize(("persona", "status"), [("viewer", 403), ("editor", 403)])
def test_only_operators_push(
    api_client: Any, request: pytest.FixtureRequest, persona: str, status: int, demo_snapshot: Any
) -> None:
    login(api_client, request, persona)
    response = api_client.post(f"/api/v1/clusters/{demo_snapshot.cluster_id}/sync/")
    assert response.status_code == status
    assert "operator role" in response.json()["detail"]


@pytest.mark.parametrize("persona", ["operator", "superuser"])
def test_operators_push_and_the_task_runs_on_commit(
    api_client: Any,
    request: pytest.FixtureRequest,
    persona: str,
    demo_snapshot: Any,
    celery_eager: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    login(api_client, request, persona)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api_client.post(f"/api/v1/clusters/{demo_snapshot.cluster_id}/sync/")
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["kind"] == "push"
    assert len(callbacks) == 1


def test_sync_of_unknown_cluster_is_404(api_client: Any, operator: User) -> None:
    api_client.force_login(operator)
    assert api_client.post("/api/v1/clusters/999/sync/").status_code == 404


@pytest.mark.urls("tests.policy.urls")
@pytest.mark.parametrize(
    ("persona", "read", "write"),
    [
        ("nobody", 403, 403),
        ("viewer", 200, 403),
        ("editor", 200, 201),
        ("operator", 200, 201),
        ("superuser", 200, 201),
    ],
)
def test_policy_edit_rights(
    api_client: Any, request: pytest.FixtureRequest, persona: str, read: int, write: int
) -> None:
    login(api_client, request, persona)
    assert api_client.get("/api/v1/test-policies/").status_code == read
    assert api_client.post("/api/v1/test-policies/", {}).status_code == write


def test_filtering_ordering_and_page_cap(api_client: Any, superuser: User, settings: Any) -> None:
    for name in ("b-cluster", "a-cluster", "c-cluster"):
        Cluster.objects.create(name=name)
    Cluster.objects.create(name="prod", kind="kubeconfig", kubeconfig_path="/etc/kube/prod")
    api_client.force_login(superuser)
    names = [
        c["name"] for c in api_client.get("/api/v1/clusters/?ordering=-name").json()["results"]
    ]
    assert names == ["prod", "c-cluster", "b-cluster", "a-cluster"]
    kubeconfig = api_client.get("/api/v1/clusters/?kind=kubeconfig").json()
    assert [c["name"] for c in kubeconfig["results"]] == ["prod"]
    assert kubeconfig["results"][0]["latest_snapshot"] is None
    settings.API_MAX_PAGE_SIZE = 2
    page = api_client.get("/api/v1/clusters/?limit=100").json()
    assert page["count"] == 4 and len(page["results"]) == 2 and page["next"]
    assert api_client.get("/api/v1/clusters/?kind=bogus").status_code == 400
