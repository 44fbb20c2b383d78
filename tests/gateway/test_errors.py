"""Permanent errors fail fast, with the API server's own message and no retries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from policy.clusters.gateway.apply import apply_configmap_key, apply_node_annotations
from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.errors import ApplyError, PermanentError
from policy.clusters.gateway.retry import RetryPolicy
from tests.gateway.faultproxy import FaultProxy, matching
from tests.gateway.kubeserver import KubeServer, ensure_namespaces

PATIENT = RetryPolicy(attempts=5, base_delay=0.5)  # a retry would show in the time taken


@pytest.fixture
def via_proxy(kube: KubeServer, proxy: FaultProxy, tmp_path: Path) -> Iterator[Connection]:
    kubeconfig = kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")
    with kube.connect(kubeconfig=kubeconfig, retry_policy=PATIENT) as conn:
        yield conn


def test_422_on_a_configmap(
    via_proxy: Connection, proxy: FaultProxy, admin: Connection, unique: Callable[[str], str]
) -> None:
    ensure_namespaces(admin, ["kube-system"])
    name = unique("invalid")
    with pytest.raises(PermanentError) as info:
        apply_configmap_key(via_proxy, "kube-system", name, "not a valid key!", "x")
    assert info.value.status == 422
    assert f'create kube-system/{name}: ConfigMap "{name}" is invalid' in info.value.message
    assert "a valid config key must consist of alphanumeric characters" in info.value.message
    assert proxy.outcomes("POST", "/configmaps") == ["forwarded 422"]


def test_422_on_a_node_annotation(
    via_proxy: Connection,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    first, second = scratch_nodes(2)
    with pytest.raises(ApplyError) as info:
        apply_node_annotations(
            via_proxy, {first: "{}", second: "{}"}, set(), annotation="bad key/x"
        )
    assert info.value.status == 422
    assert 'metadata.annotations: Invalid value: "bad key/x"' in info.value.message
    assert info.value.applied == [] and info.value.owned == frozenset()
    assert proxy.outcomes("PATCH", first) == ["forwarded 422"]
    assert proxy.outcomes("PATCH", second) == []  # stopped at the first failure


def test_an_apply_error_reports_what_was_written(
    admin: Connection,
    proxy: FaultProxy,
    via_proxy: Connection,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    first, second = sorted(scratch_nodes(2))
    proxy.fail(1, 403, matching("PATCH", second))
    with pytest.raises(ApplyError) as info:
        apply_node_annotations(via_proxy, {first: "{}", second: "{}"}, set())
    assert [c.name for c in info.value.applied] == [first]
    assert info.value.owned == {first} and info.value.status == 403
    assert "injected fault 403" in info.value.message


def test_401_with_a_wrong_token(kube: KubeServer, tmp_path: Path) -> None:
    config = kube.kubeconfig.read_text().replace('user: {token: "', 'user: {token: "wrong')
    path = tmp_path / "kubeconfig"
    path.write_text(config)
    with (
        kube.connect(kubeconfig=path, retry_policy=PATIENT) as conn,
        pytest.raises(PermanentError) as info,
    ):
        conn.request("GET", "/api/v1/nodes")
    assert info.value.status == 401 and "Unauthorized" in info.value.message
