"""/healthz says the process is up; /readyz checks the database and the broker."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client

from policy.core import health


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
    class Refusing:
        def cursor(self) -> None:
            raise OperationalError("connection refused")

        def close(self) -> None:
            pass

    monkeypatch.setattr(health, "connection", Refusing())
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "error: OperationalError"


@pytest.mark.django_db
def test_probes_reject_writes(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
    assert client.post("/readyz").status_code == 405


PROBE = """
import json, os, time
import django
django.setup()
from django.test import Client
client = Client()
client.cookies["sessionid"] = "a-session-the-database-would-be-asked-about"
started = time.monotonic()
ready = client.get("/readyz")
alive = client.get("/healthz")
print(json.dumps([ready.status_code, ready.json(), alive.status_code, time.monotonic() - started]))
"""


def test_a_hanging_database_makes_readyz_answer_503_in_seconds() -> None:
    """A server that accepts connections and never answers (a hung PostgreSQL): /readyz says
    so within its timeouts, and /healthz, which needs no database, still says ok."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{port}/hung",
            "DATABASE_CONNECT_TIMEOUT": "2",
            "CELERY_BROKER_URL": "",
            "ALLOWED_HOSTS": "testserver",
        }
        result = subprocess.run(
            [sys.executable, "-c", PROBE],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    status, body, alive, seconds = json.loads(result.stdout.strip().splitlines()[-1])
    assert status == 503 and body["checks"]["database"].startswith("error")
    assert alive == 200
    assert seconds < 10


@pytest.mark.django_db
def test_probes_answer_any_host_other_pages_do_not(client: Client, settings: Any) -> None:
    """A kubelet calls the probes by the pod's IP, which ALLOWED_HOSTS does not list."""
    settings.ALLOWED_HOSTS = ["sched.example.com"]
    assert client.get("/healthz", HTTP_HOST="10.244.1.7:8000").status_code == 200
    assert client.get("/readyz", HTTP_HOST="10.244.1.7:8000").status_code == 200
    assert client.get("/accounts/login/", HTTP_HOST="10.244.1.7:8000").status_code == 400
    assert client.post("/healthz", HTTP_HOST="sched.example.com").status_code == 405
