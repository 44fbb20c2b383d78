from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.accounts.services import create_token

pytestmark = pytest.mark.django_db


def test_me_with_a_session(api_client: Any, editor: User) -> None:
    api_client.force_login(editor)
    body = api_client.get("/api/v1/me/").json()
    assert body == {
        "username": "eddie",
        "roles": ["viewer", "editor"],
        "is_superuser": False,
        "authentication": "session",
        "token": None,
    }


def test_me_with_a_token(api_client: Any, operator: User) -> None:
    _, key = create_token(operator, name="script", write_enabled=False)
    body = api_client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}").json()
    assert body["username"] == "otto"
    assert body["roles"] == ["viewer", "editor", "operator"]
    assert body["authentication"] == "token"
    assert body["token"]["name"] == "script" and body["token"]["write_enabled"] is False


def test_me_for_a_user_without_roles(api_client: Any, nobody: User) -> None:
    api_client.force_login(nobody)
    assert api_client.get("/api/v1/me/").json()["roles"] == []


def test_me_needs_authentication(api_client: Any) -> None:
    assert api_client.get("/api/v1/me/").status_code == 401


def test_api_root_lists_the_endpoints(api_client: Any, viewer: User) -> None:
    api_client.force_login(viewer)
    body = api_client.get("/api/v1/").json()
    assert set(body) == {
        "clusters",
        "tokens",
        "decisions",
        "scheduler-configurations",
        "profiles",
        "loadaware-args",
        "node-threshold-policies",
        "collect-policies",
        "policy-changes",
        "sync-jobs",
        "what-if",
        "authorization-failures",
        "descheduler-configurations",
    }
