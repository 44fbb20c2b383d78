"""API tokens: creation (key shown once), authentication, read-only, expiry, revocation."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from policy.accounts.models import ApiToken
from policy.accounts.services import create_token

pytestmark = pytest.mark.django_db


def auth(key: str, keyword: str = "Token") -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"{keyword} {key}"}


def test_create_shows_the_key_once_and_stores_only_its_hash(api_client: Any, viewer: User) -> None:
    api_client.force_login(viewer)
    response = api_client.post("/api/v1/tokens/", {"name": "laptop"}, format="json")
    assert response.status_code == 201
    body = response.json()
    key = body["key"]
    assert key.startswith("sbd_") and len(key) == 44
    token = ApiToken.objects.get(pk=body["id"])
    assert token.owner == viewer and token.write_enabled
    assert token.key_hash == ApiToken.hash_key(key) and key not in token.key_hash
    assert body["key_prefix"] == key[:8]
    listed = api_client.get("/api/v1/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["laptop"]
    assert "key" not in listed[0]
    assert "key" not in api_client.get(f"/api/v1/tokens/{token.pk}/").json()


@pytest.mark.parametrize("keyword", ["Token", "Bearer", "bearer"])
def test_token_authenticates(api_client: Any, viewer: User, keyword: str) -> None:
    _, key = create_token(viewer, name="ci")
    response = api_client.get("/api/v1/me/", **auth(key, keyword))
    assert response.status_code == 200
    assert response.json()["username"] == viewer.username


def test_last_used_is_recorded(api_client: Any, viewer: User) -> None:
    token, key = create_token(viewer, name="ci")
    assert token.last_used is None
    api_client.get("/api/v1/me/", **auth(key))
    token.refresh_from_db()
    assert token.last_used is not None


@pytest.mark.parametrize(
    "header",
    ["Token sbd_0000000000000000000000000000000000000000", "Token", "Token a b", "Bearer nope"],
)
def test_bad_tokens_get_401(api_client: Any, viewer: User, header: str) -> None:
    response = api_client.get("/api/v1/me/", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401


def test_expired_token_gets_401(api_client: Any, viewer: User) -> None:
    token, key = create_token(viewer, name="old", expires=timezone.now() + timedelta(hours=1))
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - timedelta(seconds=1))
    response = api_client.get("/api/v1/me/", **auth(key))
    assert response.status_code == 401
    assert response.json()["detail"] == "Token expired."


def test_inactive_owner_gets_401(api_client: Any, viewer: User) -> None:
    _, key = create_token(viewer, name="ci")
    viewer.is_active = False
    viewer.save()
    assert api_client.get("/api/v1/me/", **auth(key)).status_code == 401


def test_revoked_token_stops_working(api_client: Any, viewer: User) -> None:
    token, key = create_token(viewer, name="ci")
    assert api_client.get("/api/v1/me/", **auth(key)).status_code == 200
    assert api_client.delete(f"/api/v1/tokens/{token.pk}/", **auth(key)).status_code == 204
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    assert api_client.get("/api/v1/me/", **auth(key)).status_code == 401


def test_read_only_token_reads_but_never_writes(
    api_client: Any, operator: User, demo_snapshot: Any
) -> None:
    token, key = create_token(operator, name="dashboards", write_enabled=False)
    assert api_client.get("/api/v1/clusters/", **auth(key)).status_code == 200
    for method, url in [
        ("post", f"/api/v1/clusters/{demo_snapshot.cluster_id}/sync/"),
        ("post", "/api/v1/tokens/"),
        ("delete", f"/api/v1/tokens/{token.pk}/"),
        ("put", f"/api/v1/tokens/{token.pk}/"),
        ("patch", "/api/v1/me/"),
    ]:
        response = getattr(api_client, method)(url, {"name": "x"}, format="json", **auth(key))
        assert response.status_code == 403, (method, url)
        assert "read-only" in response.json()["detail"]
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_write_token_pushes_for_an_operator(
    api_client: Any, operator: User, demo_snapshot: Any, celery_eager: None
) -> None:
    _, key = create_token(operator, name="deploy")
    response = api_client.post(f"/api/v1/clusters/{demo_snapshot.cluster_id}/sync/", **auth(key))
    assert response.status_code == 202


def test_a_token_cannot_outlive_the_token_creating_it(api_client: Any, viewer: User) -> None:
    soon = timezone.now() + timedelta(days=1)
    _, key = create_token(viewer, name="short", expires=soon)
    later = (soon + timedelta(days=1)).isoformat()
    for payload in ({"name": "forever"}, {"name": "later", "expires": later}):
        response = api_client.post("/api/v1/tokens/", payload, format="json", **auth(key))
        assert response.status_code == 400
        assert "no later" in response.json()["expires"][0]
    earlier = (soon - timedelta(hours=1)).isoformat()
    response = api_client.post(
        "/api/v1/tokens/", {"name": "shorter", "expires": earlier}, format="json", **auth(key)
    )
    assert response.status_code == 201


def test_a_session_may_create_read_only_and_expiring_tokens(api_client: Any, viewer: User) -> None:
    api_client.force_login(viewer)
    expires = (timezone.now() + timedelta(days=30)).isoformat()
    response = api_client.post(
        "/api/v1/tokens/",
        {"name": "ro", "write_enabled": False, "expires": expires},
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["write_enabled"] is False


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "dup"}, "name"),
        ({"name": "past", "expires": "2001-01-01T00:00:00Z"}, "expires"),
        ({"name": "bad", "expires": "tomorrow"}, "expires"),
        ({"name": "bad", "write_enabled": "perhaps"}, "write_enabled"),
    ],
)
def test_invalid_token_requests_name_the_field(
    api_client: Any, viewer: User, payload: dict[str, Any], field: str
) -> None:
    create_token(viewer, name="dup")
    api_client.force_login(viewer)
    response = api_client.post("/api/v1/tokens/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_the_same_name_is_fine_for_another_user(
    api_client: Any, viewer: User, editor: User
) -> None:
    create_token(viewer, name="ci")
    api_client.force_login(editor)
    assert api_client.post("/api/v1/tokens/", {"name": "ci"}, format="json").status_code == 201


def test_users_see_and_revoke_only_their_own_tokens(
    api_client: Any, viewer: User, editor: User
) -> None:
    theirs, _ = create_token(editor, name="theirs")
    api_client.force_login(viewer)
    assert api_client.get("/api/v1/tokens/").json()["results"] == []
    assert api_client.get(f"/api/v1/tokens/{theirs.pk}/").status_code == 404
    assert api_client.delete(f"/api/v1/tokens/{theirs.pk}/").status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_tokens_need_authentication(api_client: Any) -> None:
    assert api_client.get("/api/v1/tokens/").status_code == 401
    assert api_client.post("/api/v1/tokens/", {"name": "x"}).status_code == 401


def test_a_name_taken_concurrently_is_a_400_not_a_500(
    api_client: Any, viewer: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from policy.api.accounts.serializers import ApiTokenSerializer

    create_token(viewer, name="race")
    # The uniqueness check passed before the other request's token was committed.
    monkeypatch.setattr(ApiTokenSerializer, "validate_name", lambda self, name: name)
    api_client.force_login(viewer)
    response = api_client.post("/api/v1/tokens/", {"name": "race"}, format="json")
    assert response.status_code == 400
    assert "already have a token" in response.json()["name"][0]


@pytest.mark.parametrize("name", [65717, 1.5, True, ["laptop"]])
def test_a_name_that_is_not_text_is_refused_not_converted(
    api_client: Any, viewer: User, name: object
) -> None:
    api_client.force_login(viewer)
    response = api_client.post("/api/v1/tokens/", {"name": name}, format="json")
    assert response.status_code == 400
    assert "Not a valid string" in str(response.json()["name"])
    assert not ApiToken.objects.exists()
