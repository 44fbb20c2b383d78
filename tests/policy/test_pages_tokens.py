"""The API tokens page: create one (its key shown once, working at once), list, revoke."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.accounts.models import ApiToken

pytestmark = pytest.mark.django_db

KEY = re.compile(r'value="(sbd_[0-9a-f]{40})"')


def test_create_shows_the_key_once_and_it_works(client: Any, viewer: User) -> None:
    client.force_login(viewer)
    page = client.get("/tokens/")
    assert page.status_code == 200 and "You have no token yet." in page.content.decode()
    assert 'href="/tokens/"' in page.content.decode()  # in the navigation

    created = client.post("/tokens/", {"name": "ci-read", "expires": ""})
    html = created.content.decode()
    assert created.status_code == 200
    assert "no-store" in created["Cache-Control"]
    key = KEY.search(html)
    assert key is not None, html
    token = ApiToken.objects.get(owner=viewer, name="ci-read")
    assert token.write_enabled is False  # the box was not ticked: read-only
    assert token.key_hash == ApiToken.hash_key(key.group(1))

    # The key works for the API, read-only.
    client.logout()
    auth = {"HTTP_AUTHORIZATION": f"Token {key.group(1)}"}
    assert client.get("/api/v1/me/", **auth).json()["authentication"] == "token"
    assert client.post("/api/v1/tokens/", {"name": "x"}, **auth).status_code == 403

    # Listed, never shown again.
    client.force_login(viewer)
    listed = client.get("/tokens/").content.decode()
    assert "ci-read" in listed and token.key_prefix in listed and "read-only" in listed
    assert key.group(1) not in listed and KEY.search(listed) is None


def test_bad_input_is_a_400_naming_the_field(client: Any, viewer: User) -> None:
    client.force_login(viewer)
    client.post("/tokens/", {"name": "deploy", "write_enabled": "on"})
    again = client.post("/tokens/", {"name": "deploy"})
    assert again.status_code == 400
    assert "You already have a token named &#x27;deploy&#x27;." in again.content.decode()
    past = client.post("/tokens/", {"name": "old", "expires": "2001-01-01 00:00"})
    assert past.status_code == 400 and "Must be in the future." in past.content.decode()
    assert ApiToken.objects.filter(owner=viewer).count() == 1
    assert KEY.search(again.content.decode()) is None


def test_revoke_only_your_own(client: Any, viewer: User, editor: User) -> None:
    client.force_login(viewer)
    client.post("/tokens/", {"name": "mine", "write_enabled": "on"})
    mine = ApiToken.objects.get(owner=viewer)
    client.force_login(editor)
    client.post("/tokens/", {"name": "theirs"})
    theirs = ApiToken.objects.get(owner=editor)
    assert client.post(f"/tokens/{mine.pk}/revoke/").status_code == 404
    assert ApiToken.objects.filter(pk=mine.pk).exists()
    response = client.post(f"/tokens/{theirs.pk}/revoke/", follow=True)
    assert "Token &#x27;theirs&#x27; revoked" in response.content.decode()
    assert not ApiToken.objects.filter(pk=theirs.pk).exists()
    assert client.get(f"/tokens/{mine.pk}/revoke/").status_code == 405


def test_needs_a_login(client: Any) -> None:
    response = client.get("/tokens/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
