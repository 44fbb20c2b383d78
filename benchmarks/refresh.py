"""Refresh benchmark: a real kube-apiserver holding a large cluster, read by list and by watch.

Run outside the test suite (it needs the kube-apiserver and etcd the gateway tests use:
``scripts/kube-apiserver/build.sh``):
    .venv/bin/python -m benchmarks.refresh [--nodes 5000] [--pods-per-node 4] [--changed 0.01]
        [--rounds 5]

Starts etcd + kube-apiserver v1.20.2 on loopback, seeds a synthetic cluster (Nodes, bound Pods,
NodeMetrics), then prints the median of ``--rounds`` of:
- a full read, every kind listed page by page (what every refresh did before the informer);
- the informer's read when nothing changed, and after ``--changed`` of all objects changed
  (a third each: NodeMetric status updates, Pod label changes, Node label changes);
- the whole refresh job (read, drift check, snapshot stored or kept) in a fresh SQLite database,
  with nothing changed and after such a change: ``SyncJob.finished - started``.
Results and the machine they were measured on: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.informer import ClusterInformer
from policy.clusters.gateway.readback import SNAPSHOT_KINDS, list_objects, slim
from scoring.synthetic import generate_cluster

MERGE_PATCH = "application/merge-patch+json"
Json = dict[str, Any]


@contextmanager
def kube_apiserver(directory: Path) -> Iterator[Any]:
    from tests.gateway import kubeserver

    binary, problem = kubeserver.find_binary()
    if binary is None:
        raise SystemExit(f"{problem}: build it with scripts/kube-apiserver/build.sh")
    server = kubeserver.KubeServer.start(binary, directory)
    try:
        with server.connect() as admin:
            kubeserver.install_crds(admin)
        yield server
    finally:
        server.stop()


def seed(server: Any, objects: list[Json]) -> float:
    from tests.gateway import kubeserver

    started = time.perf_counter()
    with server.connect() as admin:
        kubeserver.seed(admin, objects, workers=8)
    return time.perf_counter() - started


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


class Churn:
    """Changes ``count`` objects per round: NodeMetric status, Pod labels, Node labels."""

    def __init__(self, objects: list[Json], count: int) -> None:
        kinds = ("NodeMetric", "Pod", "Node")
        self.by_kind = {kind: [o for o in objects if o["kind"] == kind] for kind in kinds}
        self.count = count
        self.round = 0
        self.random = random.Random(3)

    def apply(self, admin: Connection) -> None:
        self.round += 1
        share = max(1, self.count // 3)
        for kind, objects in self.by_kind.items():
            for obj in self.random.sample(objects, min(share, len(objects))):
                path, body = self._patch(kind, obj)
                admin.request("PATCH", path, body=body, content_type=MERGE_PATCH)

    def _patch(self, kind: str, obj: Json) -> tuple[str, Json]:
        meta = obj["metadata"]
        if kind == "NodeMetric":
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            path = f"/apis/slo.koordinator.sh/v1alpha1/nodemetrics/{meta['name']}/status"
            return path, {"status": {"updateTime": now}}
        label = {"metadata": {"labels": {"bench-round": str(self.round)}}}
        if kind == "Pod":
            return f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}", label
        return f"/api/v1/nodes/{meta['name']}", label


def list_every_kind(admin: Connection) -> list[Json]:
    """Every kind listed in turn, page by page: what every refresh did before the informer."""
    return [slim(item, kind) for kind in SNAPSHOT_KINDS for item in list_objects(admin, kind).items]


def median(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.0f} ms"


def bench_reads(server: Any, churn: Churn, rounds: int) -> None:
    with server.connect() as admin:
        full = [timed(lambda: list_every_kind(admin)) for _ in range(rounds)]
        informer = ClusterInformer()
        first = timed(lambda: informer.read(admin))
        quiet = [timed(lambda: informer.read(admin)) for _ in range(rounds)]
        changed: list[float] = []
        applied: list[int] = []
        for _ in range(rounds):
            churn.apply(admin)
            changed.append(timed(lambda: applied.append(informer.read(admin).changes)))
    print(f"full read (list every kind)            {median(full)}")
    print(f"informer: first read (lists)           {first * 1000:8.0f} ms")
    print(f"informer: nothing changed              {median(quiet)}")
    print(f"informer: {churn.count} objects changed          {median(changed)}", end="")
    print(f"   (events applied per round: {sorted(set(applied))})")


def bench_jobs(server: Any, churn: Churn, rounds: int, workdir: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    logging.disable(logging.INFO)  # the job's progress lines would drown the numbers
    from django.core.management import call_command

    from policy.clusters.models import Cluster
    from policy.core.choices import ClusterKind
    from policy.sync.jobs import request_refresh
    from policy.sync.models import SyncJob

    call_command("migrate", verbosity=0)
    cluster = Cluster.objects.create(
        name="bench",
        kind=ClusterKind.KUBECONFIG,
        kubeconfig_path=str(server.kubeconfig),
        kubeconfig_context="admin",
    )

    def refresh() -> float:
        job = request_refresh(cluster)  # no broker: the task runs here, at once
        job = SyncJob.objects.get(pk=job.pk)
        if job.status != "succeeded" or job.duration is None:
            raise SystemExit(f"refresh job {job.pk} {job.status}:\n{job.log}")
        return job.duration

    first = refresh()
    quiet = [refresh() for _ in range(rounds)]
    changed: list[float] = []
    with server.connect() as admin:
        for _ in range(rounds):
            churn.apply(admin)
            changed.append(refresh())
    snapshots = cluster.snapshots.count()
    print(f"refresh job: first (lists, stores)     {first * 1000:8.0f} ms")
    print(f"refresh job: nothing changed           {median(quiet)}")
    print(f"refresh job: {churn.count} objects changed       {median(changed)}", end="")
    print(f"   (snapshots stored: {snapshots})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=float, default=4.0)
    parser.add_argument("--changed", type=float, default=0.01, help="share of objects changed")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    objects = generate_cluster(
        nodes=args.nodes, pods_per_node=args.pods_per_node, pending_pods=0, nrt_nodes=0, seed=11
    )
    count = max(3, round(len(objects) * args.changed))
    with (
        tempfile.TemporaryDirectory(prefix="schedboard-bench-") as tmp,
        kube_apiserver(Path(tmp) / "kube") as server,
    ):
        print(f"cluster: {args.nodes} nodes, {len(objects)} objects; seeding ...", flush=True)
        print(f"seeded in {seed(server, objects):.0f} s")
        churn = Churn(objects, count)
        bench_reads(server, churn, args.rounds)
        bench_jobs(server, churn, args.rounds, Path(tmp))


if __name__ == "__main__":
    main()
