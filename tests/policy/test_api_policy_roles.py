"""Who may do what on the policy endpoints, and the audit of refused requests."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.accounts.models import AuthorizationFailure
from policy.accounts.services import create_token
from policy.clusters.models import Cluster
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)

pytestmark = pytest.mark.django_db

READERS = ["viewer", "editor", "operator", "superuser"]
WRITERS = ["editor", "operator", "superuser"]


@pytest.fixture
def objects(demo_snapshot: Any) -> dict[str, Any]:
    cluster = Cluster.objects.get(pk=demo_snapshot.cluster_id)
    configuration = SchedulerConfiguration.objects.create(cluster=cluster)
    profile = SchedulerProfile.objects.create(configuration=configuration, scheduler_name="a")
    args = LoadAwareSchedulingArgs.objects.create(profile=profile)
    threshold = NodeThresholdPolicy.objects.create(
        cluster=cluster, name="t", node_names=["n1"], usage_thresholds={"cpu": 60}
    )
    collect = NodeMetricCollectPolicy.objects.create(
        cluster=cluster, name="c", is_default=True, report_interval_seconds=30
    )
    return {
        "cluster": cluster,
        "scheduler-configurations": configuration,
        "profiles": profile,
        "loadaware-args": args,
        "node-threshold-policies": threshold,
        "collect-policies": collect,
    }


def new_object_body(route: str, objects: dict[str, Any]) -> dict[str, Any]:
    cluster = objects["cluster"]
    if route == "scheduler-configurations":
        other = Cluster.objects.create(name="other")
        return {"cluster": other.pk}
    if route == "profiles":
        return {"configuration": objects["scheduler-configurations"].pk, "scheduler_name": "b"}
    if route == "loadaware-args":
        configuration = objects["scheduler-configurations"]
        profile = SchedulerProfile.objects.create(configuration=configuration, scheduler_name="c")
        return {"profile": profile.pk}
    if route == "node-threshold-policies":
        return {
            "cluster": cluster.pk,
            "name": "n",
            "node_names": ["n2"],
            "usage_thresholds": {"cpu": 1},
        }
    return {"cluster": cluster.pk, "name": "o", "node_selector": {}, "report_interval_seconds": 5}


ROUTES = [
    "scheduler-configurations",
    "profiles",
    "loadaware-args",
    "node-threshold-policies",
    "collect-policies",
]


def login(api_client: Any, request: pytest.FixtureRequest, persona: str) -> User:
    user: User = request.getfixturevalue(persona)
    api_client.force_login(user)
    return user


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("persona", READERS)
def test_every_role_reads(
    api_client: Any, request: pytest.FixtureRequest, persona: str, route: str, objects: Any
) -> None:
    login(api_client, request, persona)
    obj = objects[route]
    assert api_client.get(f"/api/v1/{route}/").json()["count"] == 1
    assert api_client.get(f"/api/v1/{route}/{obj.pk}/")["ETag"] == 'W/"1"'
    assert api_client.get(f"/api/v1/{route}/{obj.pk}/history/").status_code == 200


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("persona", WRITERS)
def test_editors_and_up_write(
    api_client: Any, request: pytest.FixtureRequest, persona: str, route: str, objects: Any
) -> None:
    login(api_client, request, persona)
    created = api_client.post(f"/api/v1/{route}/", new_object_body(route, objects), format="json")
    assert created.status_code == 201, created.json()
    url = f"/api/v1/{route}/{created.json()['id']}/"
    assert api_client.delete(url, HTTP_IF_MATCH=created["ETag"]).status_code == 204


@pytest.mark.parametrize("route", ROUTES)
def test_viewers_cannot_write_and_are_audited(
    api_client: Any, viewer: User, route: str, objects: Any, caplog: Any
) -> None:
    api_client.force_login(viewer)
    obj = objects[route]
    url = f"/api/v1/{route}/{obj.pk}/"
    with caplog.at_level(logging.WARNING, logger="policy.audit"):
        assert api_client.post(f"/api/v1/{route}/", {}, format="json").status_code == 403
        assert api_client.patch(url, {}, format="json", HTTP_IF_MATCH="*").status_code == 403
        assert api_client.delete(url, HTTP_IF_MATCH="*").status_code == 403
        revert = api_client.post(f"{url}revert/", {"version": 1}, format="json", HTTP_IF_MATCH="*")
        assert revert.status_code == 403
    failures = list(AuthorizationFailure.objects.order_by("id"))
    assert [f.method for f in failures] == ["POST", "PATCH", "DELETE", "POST"]
    assert all(f.user_name == "vera" and f.status_code == 403 for f in failures)
    assert "editor role" in failures[0].reason and failures[1].path == url
    assert "authorization failure: user=vera" in caplog.text
    assert type(obj).objects.get(pk=obj.pk).version == 1


@pytest.mark.parametrize("route", ROUTES)
def test_nobody_and_anonymous(api_client: Any, nobody: User, route: str, objects: Any) -> None:
    assert api_client.get(f"/api/v1/{route}/").status_code == 401
    api_client.force_login(nobody)
    assert api_client.get(f"/api/v1/{route}/").status_code == 403


def test_read_only_tokens_cannot_write(api_client: Any, editor: User, objects: Any) -> None:
    _, key = create_token(editor, name="ro", write_enabled=False)
    _, rw = create_token(editor, name="rw")
    url = f"/api/v1/profiles/{objects['profiles'].pk}/"
    assert api_client.get(url, HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    denied = api_client.patch(
        url, {"position": 3}, format="json", HTTP_AUTHORIZATION=f"Token {key}", HTTP_IF_MATCH="*"
    )
    assert denied.status_code == 403
    assert AuthorizationFailure.objects.get().method == "PATCH"
    allowed = api_client.patch(
        url, {"position": 3}, format="json", HTTP_AUTHORIZATION=f"Token {rw}", HTTP_IF_MATCH="*"
    )
    assert allowed.status_code == 200
    change = objects["profiles"].__class__.objects.get(pk=objects["profiles"].pk)
    assert change.version == 2
    from policy.accounts.models import PolicyChange

    recorded = PolicyChange.objects.filter(object_id=change.pk, action="update").first()
    assert recorded is not None and (recorded.source, recorded.token_name) == ("token", "rw")


@pytest.mark.parametrize(
    ("persona", "status"), [("viewer", 403), ("editor", 403), ("operator", 200)]
)
def test_authorization_failures_are_for_operators(
    api_client: Any, request: pytest.FixtureRequest, persona: str, status: int
) -> None:
    login(api_client, request, persona)
    assert api_client.get("/api/v1/authorization-failures/").status_code == status


@pytest.mark.parametrize("persona", READERS)
def test_renders_are_for_viewers(
    api_client: Any, request: pytest.FixtureRequest, persona: str, objects: Any
) -> None:
    login(api_client, request, persona)
    cluster = objects["cluster"]
    configuration = objects["scheduler-configurations"]
    assert (
        api_client.get(f"/api/v1/clusters/{cluster.pk}/node-thresholds/render/").status_code == 200
    )
    assert (
        api_client.get(f"/api/v1/clusters/{cluster.pk}/colocation-config/render/").status_code
        == 200
    )
    assert (
        api_client.get(f"/api/v1/scheduler-configurations/{configuration.pk}/render/").status_code
        == 200
    )
    assert (
        api_client.get(f"/api/v1/scheduler-configurations/{configuration.pk}/document/").status_code
        == 200
    )
    threshold = objects["node-threshold-policies"]
    assert (
        api_client.get(f"/api/v1/node-threshold-policies/{threshold.pk}/preview/").status_code
        == 200
    )
    assert api_client.get("/api/v1/policy-changes/").status_code == 200


def test_viewers_cannot_import(api_client: Any, viewer: User, objects: Any) -> None:
    api_client.force_login(viewer)
    response = api_client.post(
        "/api/v1/scheduler-configurations/import/",
        {"cluster": objects["cluster"].pk, "document": "{}"},
        format="json",
    )
    assert response.status_code == 403
