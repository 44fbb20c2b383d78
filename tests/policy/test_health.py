"""/healthz says the process is up; /readyz checks the database and the broker."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client

from policy import health


def test_healthz_needs_no_login_or_database(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_ok(client: Client, settings: Any) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"] == ("ok" if settings.CELERY_BROKER_URL else "eager")


@pytest.mark.django_db
def test_readyz_reports_eager_without_a_broker(client: Client, settings: Any) -> None:
    settings.CELERY_BROKER_URL = None
    assert client.get("/readyz").json()["checks"]["broker"] == "eager"


@pytest.mark.django_db
def test_readyz_fails_when_the_broker_is_unreachable(client: Client, settings: Any) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    settings.BROKER_CHECK_TIMEOUT = 0.5
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("error")


def test_readyz_fails_when_the_database_is_down(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse() -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(health.connection, "cursor", refuse)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "error: OperationalError"


@pytest.mark.django_db
def test_probes_reject_writes(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
    assert client.post("/readyz").status_code == 405
