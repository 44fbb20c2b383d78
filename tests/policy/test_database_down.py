"""The database out of reach: the API answers a JSON 503 naming the database (never an HTML
500), the pages a notice that needs no database; other server errors stay 500s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from policy.accounts.services import create_token
from policy.api import errors
from policy.core import database

pytestmark = [
    pytest.mark.django_db(transaction=True),  # the connection is closed and reopened
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="a database server out of reach needs PostgreSQL (set DATABASE_URL)",
    ),
]


@contextmanager
def database_down() -> Iterator[str]:
    """The default connection pointed at a server that is not there (a real attempt)."""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT="1")  # nothing listens on port 1
    try:
        yield database.database_address()
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def test_the_api_answers_json_503_naming_the_database(viewer: User, settings: Any) -> None:
    key = create_token(viewer, name="outage")[1]
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    with database_down() as address:
        response = client.get("/api/v1/clusters/")
    assert response.status_code == 503, response.content[:300]
    assert response["Content-Type"] == "application/json" and response["Retry-After"] == "30"
    body = response.json()
    assert body["database"] == address and "cannot be reached" in body["detail"]
    assert body["errors"][0]["type"] == "DatabaseUnavailable"
    assert address in body["detail"] and "@" not in address  # no credentials


def test_a_page_is_a_notice_that_needs_no_database(viewer: User) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    with database_down():
        response = client.get("/")
    assert response.status_code == 503
    html = response.content.decode()
    assert "The database cannot be reached right now" in html and "Reload this page" in html


def test_another_server_error_is_still_a_500_in_json_under_the_api() -> None:
    request = RequestFactory().get("/api/v1/clusters/")
    try:
        raise ValueError("boom")
    except ValueError:
        response = errors.server_error(request)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
