"""A real kube-apiserver (v1.20.2) + etcd for the gateway tests, and a seeded cluster in it.

The binary is built once per machine by ``scripts/kube-apiserver/build.sh`` and found through
``SCHEDBOARD_KUBE_APISERVER`` or the build's cache directory; ``scripts/kube-apiserver/
start.sh`` / ``stop.sh`` run it on free 127.0.0.1 ports. Seeding goes through the gateway's own
``Connection`` (the only code that talks to Kubernetes), working around a bare v1.20 server's
quirks: PriorityClasses must exist for pods that name one, status is dropped on create for
Pods and NodeMetrics (written afterwards through the status subresource), and admission
taints new Nodes ``node.kubernetes.io/not-ready`` (removed again here).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from policy.clusters.gateway.connection import (
    MERGE_PATCH,
    Connection,
    ConnectionSpec,
    Timeouts,
    connect,
    path_segment,
)
from policy.clusters.gateway.errors import ConflictError, NotFoundError
from policy.clusters.gateway.retry import RetryPolicy

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts" / "kube-apiserver"
CRDS = ROOT / "deploy" / "crds"
VERSION = "v1.20.2"
ENV_BINARY = "SCHEDBOARD_KUBE_APISERVER"

HOW_TO_BUILD = (
    "build it once with scripts/kube-apiserver/build.sh (about 7 minutes on 2 cores; installs "
    "golang-go and etcd-server with apt-get, so run it as root), or point "
    f"{ENV_BINARY} at a kube-apiserver {VERSION} binary; etcd must be on PATH"
)

Json = dict[str, Any]


def cache_dir(component: str = "kube-apiserver") -> Path:
    base = os.environ.get("SCHEDBOARD_CACHE") or ""
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = str(Path(xdg) / "schedboard")
    return Path(base) / f"{component}-{VERSION}"


def find_binary() -> tuple[Path | None, str]:
    """(binary, "") when the tests can run, else (None, why not)."""
    configured = os.environ.get(ENV_BINARY)
    binary = Path(configured) if configured else cache_dir() / "kube-apiserver"
    if not os.access(binary, os.X_OK):
        where = f"{ENV_BINARY}={configured}" if configured else str(binary)
        return None, f"no kube-apiserver binary at {where}"
    if shutil.which("etcd") is None:
        return None, "etcd is not installed"
    return binary, ""


@dataclass
class KubeServer:
    """A running etcd + kube-apiserver; ``directory`` holds kubeconfig, certificates, logs."""

    directory: Path
    url: str

    @classmethod
    def start(cls, binary: Path, directory: Path) -> KubeServer:
        subprocess.run(
            [str(SCRIPTS / "start.sh"), str(binary), str(directory)],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        env = dict(
            line.split("=", 1) for line in (directory / "env").read_text().splitlines() if line
        )
        return cls(directory, env["APISERVER_URL"])

    def stop(self) -> None:
        subprocess.run([str(SCRIPTS / "stop.sh"), str(self.directory)], check=False, timeout=60)

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "kubeconfig"

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    def connect(
        self,
        context: str = "admin",
        *,
        kubeconfig: Path | None = None,
        retry_policy: RetryPolicy | None = None,
        timeouts: Timeouts | None = None,
    ) -> Connection:
        spec = ConnectionSpec("kubeconfig", str(kubeconfig or self.kubeconfig), context)
        return connect(
            spec,
            retry_policy=retry_policy or RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.2),
            timeouts=timeouts or Timeouts(connect=5, read=30),
        )

    def kubeconfig_for(self, server: str, path: Path) -> Path:
        """A copy of the kubeconfig whose cluster is reached at ``server`` (e.g. a proxy)."""
        config = yaml.safe_load(self.kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = server
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path


# --------------------------------------------------------------------------------------------
# Creating objects


def api_path(obj: Json, *, collection: bool = True) -> str:
    """The REST path of ``obj``'s kind (its collection, or the object itself)."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    plural = _PLURALS[kind]
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    namespace = (obj.get("metadata") or {}).get("namespace")
    if namespace and kind not in _CLUSTER_SCOPED:
        base += f"/namespaces/{path_segment(namespace)}"
    path = f"{base}/{plural}"
    return path if collection else f"{path}/{path_segment(obj['metadata']['name'])}"


_PLURALS = {
    "Namespace": "namespaces",
    "Node": "nodes",
    "Pod": "pods",
    "ConfigMap": "configmaps",
    "ServiceAccount": "serviceaccounts",
    "Service": "services",
    "Deployment": "deployments",
    "PriorityClass": "priorityclasses",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "CustomResourceDefinition": "customresourcedefinitions",
    "NodeMetric": "nodemetrics",
    "NodeResourceTopology": "noderesourcetopologies",
}
_CLUSTER_SCOPED = {
    "Namespace",
    "Node",
    "PriorityClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "NodeMetric",
    "NodeResourceTopology",
}


def create(conn: Connection, obj: Json, *, exist_ok: bool = False, dry_run: bool = False) -> Json:
    query = {"dryRun": "All"} if dry_run else None
    try:
        return conn.request("POST", api_path(obj), body=obj, query=query)
    except ConflictError:
        if not exist_ok:
            raise
        return conn.request("GET", api_path(obj, collection=False))


def manifests(path: Path) -> list[Json]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def install_crds(conn: Connection) -> None:
    """Create the CRDs from ``deploy/crds`` and wait until their APIs are served."""
    for path in sorted(CRDS.glob("*.yaml")):
        for crd in manifests(path):
            create(conn, crd, exist_ok=True)
    for path in sorted(CRDS.glob("*.yaml")):
        for crd in manifests(path):
            _wait_established(conn, crd)


def _wait_established(conn: Connection, crd: Json) -> None:
    """A new CRD's API answers 404 for a moment: wait until its objects can be listed."""
    group = crd["spec"]["group"]
    version = crd["spec"]["versions"][0]["name"]
    plural = crd["spec"]["names"]["plural"]
    for _ in range(200):
        try:
            conn.request("GET", f"/apis/{group}/{version}/{plural}", query={"limit": 1})
            return
        except NotFoundError:
            time.sleep(0.05)
    raise TimeoutError(f"CRD {crd['metadata']['name']} was not served in time")


def ensure_namespaces(conn: Connection, names: Iterable[str]) -> None:
    for name in sorted(set(names)):
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        create(conn, ns, exist_ok=True)


def seed(conn: Connection, objects: list[Json], *, workers: int = 4) -> None:
    """Create a synthetic cluster's objects as a real cluster would hold them."""
    by_kind: dict[str, list[Json]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    pods = by_kind.get("Pod", [])
    _priority_classes(conn, pods)
    ensure_namespaces(conn, (pod["metadata"]["namespace"] for pod in pods))
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda node: seed_node(conn, node), by_kind.get("Node", [])))
        list(pool.map(lambda pod: _with_status(conn, pod), pods))
        list(pool.map(lambda nm: _with_status(conn, nm), by_kind.get("NodeMetric", [])))
        list(pool.map(lambda t: create(conn, t), by_kind.get("NodeResourceTopology", [])))


def _clean(obj: Json) -> Json:
    """A copy fit for create: server-owned metadata (uid, creationTimestamp) dropped."""
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k not in ("uid", "creationTimestamp", "resourceVersion")
    }
    return {**obj, "metadata": meta}


def seed_node(conn: Connection, node: Json) -> Json:
    """Create a Node, then give it back the taints it was meant to have (admission adds
    ``node.kubernetes.io/not-ready`` to every new node)."""
    create(conn, _clean(node))
    taints = node.get("spec", {}).get("taints")
    patch = {"spec": {"taints": taints}}  # null removes the admission's taint
    return conn.request(
        "PATCH", api_path(node, collection=False), body=patch, content_type=MERGE_PATCH
    )


def _with_status(conn: Connection, obj: Json) -> Json:
    """Create, then write ``status`` through the status subresource (dropped on create)."""
    created = create(conn, _clean({k: v for k, v in obj.items() if k != "status"}))
    if not obj.get("status"):
        return created
    return conn.request(
        "PATCH",
        api_path(obj, collection=False) + "/status",
        body={"status": obj["status"]},
        content_type=MERGE_PATCH,
    )


def _priority_classes(conn: Connection, pods: list[Json]) -> None:
    """A v1.20 server refuses a pod with ``spec.priority`` unless its class exists."""
    classes = {
        pod["spec"]["priorityClassName"]: pod["spec"].get("priority", 0)
        for pod in pods
        if pod["spec"].get("priorityClassName")
    }
    for name, value in sorted(classes.items()):
        obj = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        create(conn, obj, exist_ok=True)


def pending_pod(name: str, namespace: str, *, cpu: str = "10m", scheduler: str = "") -> Json:
    """A one-container pod asking for ``cpu``, to be placed (by ``scheduler``, if given)."""
    spec: Json = {
        "containers": [{"name": "app", "image": "x", "resources": {"requests": {"cpu": cpu}}}]
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


# --------------------------------------------------------------------------------------------
# kube-scheduler of the same release


def scheduler_binary() -> Path | None:
    """SCHEDBOARD_KUBE_SCHEDULER, else the one build.sh cached (None: not built here)."""
    configured = os.environ.get("SCHEDBOARD_KUBE_SCHEDULER")
    binary = Path(configured) if configured else cache_dir("kube-scheduler") / "kube-scheduler"
    return binary if os.access(binary, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def kube_scheduler(
    server: KubeServer, directory: Path, profiles: list[Json], **top_level: Any
) -> Iterator[Path]:
    """A real kube-scheduler serving ``profiles`` (``kubescheduler.config.k8s.io/v1beta1``, what
    v1.20 reads) against ``server``; yields its log file. Skips the test without the binary
    (fails it in CI)."""
    binary = scheduler_binary()
    if binary is None:
        how = "build it with scripts/kube-apiserver/build.sh kube-scheduler"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs kube-scheduler: {how}")
        pytest.skip(f"no kube-scheduler: {how}")
    # 1.20 serves healthz and metrics where its config says, 0.0.0.0:10251 by default (the
    # --port flag does not turn that off under --config): two schedulers at once, one per test
    # process, each need a port of their own.
    insecure = f"127.0.0.1:{_free_port()}"
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(server.kubeconfig)},
        "leaderElection": {"leaderElect": False},
        "healthzBindAddress": insecure,
        "metricsBindAddress": insecure,
        "profiles": profiles,
        **top_level,
    }
    (directory / "config.yaml").write_text(yaml.safe_dump(config))
    log_path = directory / "kube-scheduler.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(binary), f"--config={directory / 'config.yaml'}", "--port=0", "--secure-port=0"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield log_path
        finally:
            process.terminate()
            process.wait(timeout=20)
