"""Connections per cluster: kubeconfig + context or in-cluster, never showing credentials."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from policy.clusters.gateway.connection import ConnectionSpec, connect, list_contexts
from policy.clusters.gateway.errors import ConfigurationError, TransientError
from policy.clusters.gateway.retry import RetryPolicy
from tests.gateway.faultproxy import FaultProxy
from tests.gateway.kubeserver import KubeServer


def tokens(kube: KubeServer) -> list[str]:
    config = yaml.safe_load(kube.kubeconfig.read_text())
    return [user["user"]["token"] for user in config["users"]]


def test_spec_from_a_cluster_row() -> None:
    row = SimpleNamespace(
        kind="kubeconfig", kubeconfig_path="/etc/k.yaml", kubeconfig_context="prod"
    )
    assert ConnectionSpec.from_cluster(row) == ConnectionSpec("kubeconfig", "/etc/k.yaml", "prod")
    row = SimpleNamespace(kind="in-cluster", kubeconfig_path="", kubeconfig_context="")
    assert ConnectionSpec.from_cluster(row).kind == "in-cluster"
    with pytest.raises(ConfigurationError, match="'demo' cluster has no API server"):
        ConnectionSpec.from_cluster(
            SimpleNamespace(kind="demo", kubeconfig_path="", kubeconfig_context="")
        )


def test_contexts_are_listed_without_credentials(kube: KubeServer) -> None:
    assert list_contexts(str(kube.kubeconfig)) == (["admin", "schedboard"], "admin")


def test_connects_with_the_chosen_context(kube: KubeServer) -> None:
    with kube.connect("schedboard") as conn:
        text = repr(conn)
        assert "context=schedboard" in text and kube.url in text
        assert all(token not in text for token in tokens(kube))
        assert conn.version()["platform"] == "linux/amd64"  # /version is open to any user


def test_an_unknown_context_lists_the_known_ones(kube: KubeServer) -> None:
    with pytest.raises(
        ConfigurationError, match="has no context 'prod' \\(it has: admin, schedboard\\)"
    ):
        connect(ConnectionSpec("kubeconfig", str(kube.kubeconfig), "prod"))


def test_a_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        connect(ConnectionSpec("kubeconfig", str(tmp_path / "nope")))
    with pytest.raises(ConfigurationError, match="needs the kubeconfig file's path"):
        connect(ConnectionSpec("kubeconfig"))


def test_a_broken_kubeconfig_does_not_leak_its_token(tmp_path: Path) -> None:
    secret = "sha256~AbCdEf0123456789-very-secret"
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "contexts: [{name: c, context: {cluster: x, user: u}}]\n"
        f"users: [{{name: u, user: {{token: {secret}}}}}]\nclusters: []\n"
    )
    with pytest.raises(ConfigurationError) as info:
        connect(ConnectionSpec("kubeconfig", str(path)))
    assert secret not in str(info.value) and secret not in repr(info.value)


def test_in_cluster_needs_the_service_environment() -> None:
    with pytest.raises(ConfigurationError, match="Service host/port is not set"):
        connect(ConnectionSpec("in-cluster", environ={}))


def test_no_token_in_errors_or_logs(
    kube: KubeServer, proxy: FaultProxy, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Retries and failures logged at DEBUG, by the gateway, the client and urllib3."""
    kubeconfig = kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")
    proxy.fail(2, 500)
    policy = RetryPolicy(attempts=2, base_delay=0.01)
    with (
        caplog.at_level(logging.DEBUG),
        kube.connect(kubeconfig=kubeconfig, retry_policy=policy) as conn,
    ):
        with pytest.raises(TransientError) as info:
            conn.request("GET", "/api/v1/nodes")
        conn.request("GET", "/api/v1/nodes")
    assert any("retrying" in message for message in caplog.messages)
    for token in tokens(kube):
        assert token not in str(info.value)
        assert all(token not in record.getMessage() for record in caplog.records)
