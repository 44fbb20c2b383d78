"""Fixtures for the gateway tests: one real kube-apiserver per session, seeded once.

Without the binary the tests that need it are skipped with a message saying how to build it;
with ``CI=true`` they fail instead, because CI must run them (``.ci/run`` builds the binary).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.errors import NotFoundError
from scoring.synthetic import generate_cluster
from tests.gateway import kubeserver
from tests.gateway.faultproxy import FaultProxy
from tests.gateway.kubeserver import (
    HOW_TO_BUILD,
    ROOT,
    Json,
    KubeServer,
    create,
    ensure_namespaces,
    manifests,
)

SEED_NOW = datetime.now(UTC).replace(microsecond=0)


def _require_binary() -> Path:
    binary, problem = kubeserver.find_binary()
    if binary is not None:
        return binary
    message = f"{problem}: the gateway tests need a real kube-apiserver; {HOW_TO_BUILD}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI requires the gateway tests to run, but {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeServer]:
    """etcd + kube-apiserver on loopback, CRDs installed; stopped after the session."""
    binary = _require_binary()
    server = KubeServer.start(binary, tmp_path_factory.mktemp("kube"))
    try:
        with server.connect() as admin:
            kubeserver.install_crds(admin)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def seeded(kube: KubeServer) -> list[Json]:
    """A 12-node synthetic cluster (with pods, NodeMetrics, NRTs) created in the server."""
    objects = generate_cluster(
        nodes=12, pods_per_node=6, pending_pods=4, nrt_nodes=2, seed=5, now=SEED_NOW
    )
    with kube.connect() as admin:
        kubeserver.seed(admin, objects)
    return objects


@pytest.fixture
def admin(kube: KubeServer) -> Iterator[Connection]:
    with kube.connect() as conn:
        yield conn


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Names no other test uses (objects outlive tests in the shared server)."""
    token = uuid.uuid4().hex[:6]
    return lambda prefix: f"{prefix}-{token}"


@pytest.fixture
def scratch_nodes(
    admin: Connection, unique: Callable[[str], str]
) -> Iterator[Callable[..., list[str]]]:
    """Create extra nodes for one test (deleted afterwards, so read-back counts stay put)."""
    created: list[str] = []

    def make(count: int, annotations: dict[str, str] | None = None) -> list[str]:
        names = [unique(f"scratch-{len(created) + i}") for i in range(count)]
        for name in names:
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"pool": "scratch"}},
                "spec": {},
            }
            if annotations:
                node["metadata"]["annotations"] = dict(annotations)
            kubeserver.seed_node(admin, node)
            created.append(name)
        return names

    yield make
    for name in created:
        with contextlib.suppress(NotFoundError):  # the test may have deleted it itself
            admin.request("DELETE", f"/api/v1/nodes/{name}")


@pytest.fixture
def proxy(kube: KubeServer) -> Iterator[FaultProxy]:
    server = FaultProxy(
        kube.url,
        ca_file=str(kube.ca_file),
        cert_file=str(kube.directory / "server.crt"),
        key_file=str(kube.directory / "server.key"),
    ).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def rbac(kube: KubeServer) -> None:
    """deploy/namespace.yaml and deploy/rbac.yaml applied, and Koordinator's two ConfigMaps."""
    with kube.connect() as admin:
        ensure_namespaces(admin, ["koordinator-system"])
        for name in ("namespace.yaml", "rbac.yaml"):
            for obj in manifests(ROOT / "deploy" / name):
                create(admin, obj, exist_ok=True)
        for name, key in (
            ("koord-scheduler-config", "koord-scheduler-config"),
            ("slo-controller-config", "colocation-config"),
        ):
            cm = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "koordinator-system"},
                "data": {key: "{}"},
            }
            create(admin, cm, exist_ok=True)
