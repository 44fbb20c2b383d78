"""Transient failures between schedboard and the API server are retried, and leave no lost or
half-written state: a fault-injecting proxy sits in front of the real server."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from policy.clusters.gateway import retry
from policy.clusters.gateway.apply import (
    apply_configmap_key,
    apply_node_annotations,
    plan_configmap_key,
    read_configmap,
)
from policy.clusters.gateway.connection import Connection, Timeouts
from policy.clusters.gateway.errors import TransientError
from policy.clusters.gateway.retry import RetryPolicy
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.gateway.faultproxy import FaultProxy, matching
from tests.gateway.kubeserver import KubeServer, create, ensure_namespaces

NS = "kube-system"
QUICK = RetryPolicy(attempts=4, base_delay=0.02, max_delay=0.1)


@pytest.fixture
def via_proxy(kube: KubeServer, proxy: FaultProxy, tmp_path: Path) -> Iterator[Connection]:
    kubeconfig = kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")
    with kube.connect(kubeconfig=kubeconfig, retry_policy=QUICK, timeouts=Timeouts(2, 0.4)) as conn:
        yield conn


@pytest.fixture
def configmap(admin: Connection, unique: Callable[[str], str]) -> str:
    ensure_namespaces(admin, [NS])
    name = unique("faults")
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NS},
        "data": {"config": "v1", "other": "keep"},
    }
    create(admin, body)
    return name


def test_500s_then_success(
    via_proxy: Connection, proxy: FaultProxy, configmap: str, admin: Connection
) -> None:
    proxy.fail(2, 500, matching("GET", configmap))
    proxy.fail(2, 503, matching("PUT", configmap))
    result = apply_configmap_key(via_proxy, NS, configmap, "config", "v2")
    assert [c.after for c in result.applied] == ["v2"]
    gets = proxy.outcomes("GET", configmap)
    assert gets[:2] == ["fail 500", "fail 500"] and gets[2:] == ["forwarded 200"] * (len(gets) - 2)
    assert proxy.outcomes("PUT", configmap) == ["fail 503", "fail 503", "forwarded 200"]
    assert read_configmap(admin, NS, configmap)["data"] == {"config": "v2", "other": "keep"}  # type: ignore[index]


def test_persistent_failures_give_up_with_the_message(
    via_proxy: Connection, proxy: FaultProxy, configmap: str
) -> None:
    proxy.fail(100, 500, matching("GET", configmap))
    with pytest.raises(
        TransientError, match=r"injected fault 500 \(gave up after 4 attempt"
    ) as info:
        plan_configmap_key(via_proxy, NS, configmap, "config", "v2")
    assert info.value.attempts == 4 and info.value.status == 500
    assert proxy.outcomes("GET", configmap) == ["fail 500"] * 4
    policy = via_proxy.retry_policy  # backoff is capped, whatever the server says
    assert all(policy.delay(n, 3600) <= policy.max_delay for n in range(policy.attempts))


def test_429_is_retried(via_proxy: Connection, proxy: FaultProxy, configmap: str) -> None:
    proxy.fail(1, 429, matching("GET", configmap))
    assert plan_configmap_key(via_proxy, NS, configmap, "config", "v2")
    assert proxy.outcomes("GET", configmap) == ["fail 429", "forwarded 200"]


def test_read_timeout_is_retried(via_proxy: Connection, proxy: FaultProxy, configmap: str) -> None:
    proxy.delay(1, 1.0, matching("GET", configmap))
    assert plan_configmap_key(via_proxy, NS, configmap, "config", "v2")
    assert sorted(proxy.wait_for(2, "GET", configmap)) == ["delayed forwarded 200", "forwarded 200"]


def test_a_write_whose_answer_is_lost_lands_once(
    via_proxy: Connection, proxy: FaultProxy, configmap: str, admin: Connection
) -> None:
    """The PUT lands but its answer never arrives in time; the retried PUT (same
    resourceVersion) gets a 409, the re-plan finds nothing left to do."""
    proxy.slow_answer(1, 1.0, matching("PUT", configmap))
    result = apply_configmap_key(via_proxy, NS, configmap, "config", "v2")
    assert [c.after for c in result.applied] == ["v2"]
    outcomes = proxy.wait_for(2, "PUT", configmap)
    assert sorted(outcomes) == ["forwarded 409", "slowly answered forwarded 200"]
    assert read_configmap(admin, NS, configmap)["data"] == {"config": "v2", "other": "keep"}  # type: ignore[index]


def test_a_write_delayed_past_its_retry_does_no_harm(
    via_proxy: Connection, proxy: FaultProxy, configmap: str, admin: Connection
) -> None:
    """The first PUT is held until after the client retried: the retry lands, the late
    original arrives with a stale resourceVersion and is refused (409)."""
    proxy.delay(1, 1.0, matching("PUT", configmap))
    apply_configmap_key(via_proxy, NS, configmap, "config", "v2")
    assert sorted(proxy.wait_for(2, "PUT", configmap)) == ["delayed forwarded 409", "forwarded 200"]
    assert read_configmap(admin, NS, configmap)["data"] == {"config": "v2", "other": "keep"}  # type: ignore[index]


def test_node_patches_survive_resets_and_lost_answers(
    via_proxy: Connection,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    a, b = scratch_nodes(2)
    proxy.reset(1, matching("PATCH", a))
    proxy.slow_answer(1, 1.0, matching("PATCH", b))
    result = apply_node_annotations(
        via_proxy, {a: '{"usageThresholds":{"cpu":60}}', b: "{}"}, set()
    )
    assert sorted(c.name for c in result.applied) == [a, b] and result.owned == {a, b}
    assert proxy.outcomes("PATCH", a) == ["reset", "forwarded 200"]
    assert sorted(proxy.wait_for(2, "PATCH", b)) == [
        "forwarded 409",
        "slowly answered forwarded 200",
    ]
    for name, value in ((a, '{"usageThresholds":{"cpu":60}}'), (b, "{}")):
        node = admin.request("GET", f"/api/v1/nodes/{name}")
        assert node["metadata"]["annotations"][KEY] == value


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class StartOnFirstRetry(logging.Handler):
    """Runs ``start`` when the client logs its first retry (before it waits to try again), and
    keeps that line: what the first try met."""

    def __init__(self, start: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.start = start
        self.first_failure: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.first_failure is None:
            self.first_failure = record.getMessage()
            self.start()


def test_connection_refused_until_the_server_answers(kube: KubeServer, tmp_path: Path) -> None:
    """Nothing listens on the port until the client's first try was refused; then the server
    comes up, and the retry reaches it."""
    port = free_port()
    started: list[FaultProxy] = []

    def start() -> None:  # the proxy's socket listens from its construction on
        late = FaultProxy(
            kube.url,
            ca_file=str(kube.ca_file),
            cert_file=str(kube.directory / "server.crt"),
            key_file=str(kube.directory / "server.key"),
            port=port,
        )
        started.append(late.start())

    kubeconfig = kube.kubeconfig_for(f"https://127.0.0.1:{port}", tmp_path / "kubeconfig")
    policy = RetryPolicy(attempts=10, base_delay=0.05, max_delay=0.2)
    retries = logging.getLogger(retry.__name__)
    watcher = StartOnFirstRetry(start)
    retries.addHandler(watcher)
    try:
        with kube.connect(kubeconfig=kubeconfig, retry_policy=policy) as conn:
            assert conn.version()["platform"] == "linux/amd64"
    finally:
        retries.removeHandler(watcher)
        for late in started:
            late.stop()
    assert watcher.first_failure is not None and "Connection refused" in watcher.first_failure


def test_connection_refused_gives_up(kube: KubeServer, tmp_path: Path) -> None:
    kubeconfig = kube.kubeconfig_for(f"https://127.0.0.1:{free_port()}", tmp_path / "kubeconfig")
    policy = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02)
    with (
        kube.connect(kubeconfig=kubeconfig, retry_policy=policy) as conn,
        pytest.raises(TransientError) as info,
    ):
        conn.version()
    assert info.value.attempts == 3
    assert "Connection refused" in info.value.message
