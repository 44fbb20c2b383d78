"""Adding a cluster whose API server accepts connections and never answers: the check ends
within its budget (well inside the web server's 30 s worker timeout, at most 10 s) with an
error naming the server, and nothing is stored."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import Cluster
from policy.sync import connect

pytestmark = pytest.mark.django_db


@pytest.fixture
def hanging_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """A TCP server that accepts every connection and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


def kubeconfig(directory: Path, server: str) -> Path:
    path = directory / "hanging.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t0ken"}}],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "ctx",
            }
        )
    )
    return path


def test_the_check_is_bounded_inside_the_worker_timeout() -> None:
    # Every request's connect and read timeouts are cut to what is left of ``total``.
    timeouts = connect.CHECK_TIMEOUTS
    assert timeouts.total is not None and timeouts.total <= 10
    assert connect.CHECK_RETRIES.deadline is not None and connect.CHECK_RETRIES.deadline <= 10


def test_a_hanging_api_server_is_a_400_naming_it_over_the_api_and_the_page(
    hanging_server: Any, tmp_path: Path, api_client: Any, client: Client, superuser: User
) -> None:
    server, accepted = hanging_server
    path = kubeconfig(tmp_path, server)
    api_client.force_login(superuser)
    response = api_client.post(
        "/api/v1/clusters/",
        {"name": "hangs", "kind": "kubeconfig", "kubeconfig_path": str(path)},
        format="json",
    )
    assert response.status_code == 400, response.content[:300]
    [detail] = response.json()["errors"]
    assert detail["field"] == "kubeconfig_path"
    assert server in detail["detail"] or "timed out" in detail["detail"].lower()
    assert accepted  # it really connected, and gave up waiting

    client.force_login(superuser)
    response = client.post(
        "/clusters/new/",
        {"name": "hangs", "kind": "kubeconfig", "kubeconfig_path": str(path), "context": ""},
    )
    assert response.status_code == 400
    assert "Cannot connect" in response.content.decode()
    assert not Cluster.objects.filter(name="hangs").exists()
