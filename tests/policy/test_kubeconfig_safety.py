"""What a kubeconfig may make the server do, and what it may show: a credential plugin
(``exec``, ``auth-provider``) runs only when KUBECONFIG_CREDENTIAL_PLUGINS allows it, and the
body of whatever non-API server the URL points at is not echoed to the person connecting."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User

from policy.clusters.gateway.connection import ConnectionSpec, connect
from policy.clusters.gateway.errors import ConfigurationError, GatewayError
from policy.clusters.models import Cluster

pytestmark = pytest.mark.django_db

SECRET_PAGE = b"<html>intranet login: admin password hunter2</html>"


def write_kubeconfig(path: Path, server: str, user: dict[str, Any]) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "ctx",
            }
        )
    )
    return path


def exec_user(marker: Path) -> dict[str, Any]:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "sh",
            "args": ["-c", f"touch {marker}; echo nope >&2; exit 1"],
        }
    }


def test_a_credential_plugin_is_refused_before_it_runs(tmp_path: Path, settings: Any) -> None:
    marker = tmp_path / "ran"
    path = write_kubeconfig(tmp_path / "k.yaml", "https://127.0.0.1:1", exec_user(marker))
    with pytest.raises(ConfigurationError) as caught:
        connect(ConnectionSpec("kubeconfig", str(path)))
    assert "KUBECONFIG_CREDENTIAL_PLUGINS=true" in str(caught.value)
    assert "'u'" in str(caught.value) and "exec" in str(caught.value)
    assert not marker.exists()
    provider = {"auth-provider": {"name": "oidc", "config": {"id-token": "x"}}}
    path = write_kubeconfig(tmp_path / "k2.yaml", "https://127.0.0.1:1", provider)
    with pytest.raises(ConfigurationError, match="auth-provider"):
        connect(ConnectionSpec("kubeconfig", str(path)))


def test_the_setting_lets_the_plugin_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = write_kubeconfig(tmp_path / "k.yaml", "https://127.0.0.1:1", exec_user(marker))
    try:
        connect(ConnectionSpec("kubeconfig", str(path), credential_plugins=True)).close()
    except GatewayError as exc:  # the plugin failed: its output is not what is shown
        assert "nope" not in str(exc)
    assert marker.exists()


def test_adding_a_cluster_with_a_plugin_names_the_setting(
    tmp_path: Path, api_client: Any, superuser: User
) -> None:
    marker = tmp_path / "ran"
    path = write_kubeconfig(tmp_path / "k.yaml", "https://127.0.0.1:1", exec_user(marker))
    api_client.force_login(superuser)
    body = {"name": "plugged", "kind": "kubeconfig", "kubeconfig_path": str(path)}
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 400
    assert "KUBECONFIG_CREDENTIAL_PLUGINS" in str(response.json())
    assert not marker.exists() and not Cluster.objects.filter(name="plugged").exists()


class _NotAnApiServer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(SECRET_PAGE)))
        self.end_headers()
        self.wfile.write(SECRET_PAGE)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def not_an_api_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotAnApiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_non_api_servers_error_body_is_not_echoed(
    tmp_path: Path, not_an_api_server: str, api_client: Any, superuser: User
) -> None:
    path = write_kubeconfig(tmp_path / "k.yaml", not_an_api_server, {"token": "t0ken"})
    api_client.force_login(superuser)
    body = {"name": "intranet", "kind": "kubeconfig", "kubeconfig_path": str(path)}
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 400
    shown = str(response.json())
    assert "hunter2" not in shown and "intranet login" not in shown
    assert "not a Kubernetes API Status" in shown and "text/html" in shown
