"""First views of a 5,000-node cluster: dashboard, node page, evaluate form and the evaluate API,
each timed in a fresh web process.

Run outside the test suite:
    .venv/bin/python -m benchmarks.web [--nodes 5000] [--repeat 5] [--views evaluate-api ...]

Creates a fresh SQLite database in a temporary directory (``benchmarks.sqlite_settings``),
migrates it, loads the demo cluster as ``manage.py load_demo_cluster --nodes N`` does (its
snapshot and the demo scheduler configuration; with no broker, the tasks queued when the
snapshot is stored run in this process), and adds a viewer. Then, for each view, a new Python
process (``--measure VIEW``) loads the WSGI application as a web server's process does when
it starts (``config.wsgi``), logs the viewer in with Django's test client and times the view:
cold is the first request of that process; ready, when that answered with a "being prepared"
notice, the time until the view itself is served; warm the median of ``--repeat`` more. Sizes
are of the last response, uncompressed and as sent (gzip). Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import django

VIEWS = ("dashboard", "node", "evaluate-form", "evaluate-api")
VIEWER = "benchmark-viewer"


def _setup() -> Path:
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.sqlite_settings"
    django.setup()
    from django.conf import settings

    return Path(settings.DATABASES["default"]["NAME"])


def prepare(nodes: int) -> Path:
    """A migrated database holding the demo cluster of ``nodes`` nodes and a viewer."""
    database = _setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    call_command("load_demo_cluster", nodes=nodes, verbosity=0)
    print(f"demo cluster: {nodes} nodes, loaded in {time.perf_counter() - start:.1f} s")
    viewer = User.objects.create_user(username=VIEWER, password="-")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    # Closing the last connection checkpoints SQLite's write-ahead log into the database file,
    # as when the loading process has ended: a web process reads the file, not the log.
    connections.close_all()
    return database


def _request(view: str) -> Any:
    """A function making one request of ``view`` with the viewer's test client."""
    from django.contrib.auth.models import User
    from django.test import Client

    from policy.clusters.models import Cluster

    client = Client(HTTP_ACCEPT_ENCODING="gzip")
    client.force_login(User.objects.get(username=VIEWER))
    cluster = Cluster.objects.get()
    snapshot = cluster.latest_snapshot()
    assert snapshot is not None
    node = next(o for o in snapshot.objects if o.get("kind") == "Node")["metadata"]["name"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
    }

    def call(status: bool = False) -> Any:
        """One request; ``status``: the "being prepared" notice's poll (X-Partial: status)."""
        headers = {"X-Partial": "status"} if status else {}
        if view == "dashboard":
            return client.get("/", headers=headers)
        if view == "node":
            return client.get(f"/clusters/{cluster.pk}/nodes/{node}/", headers=headers)
        if view == "evaluate-form":
            return client.get("/evaluate/", headers=headers)
        return client.post(
            f"/api/v1/clusters/{cluster.pk}/evaluate/",
            json.dumps({"pod": pod}),
            content_type="application/json",
        )

    return call


def measure(view: str, repeat: int) -> dict[str, Any]:
    """Time ``view`` in this (fresh) process: the first request, the time until the view
    itself is served when that first answer was a "being prepared" notice (polled as the
    page's script does), then the median of ``repeat`` more requests."""
    _setup()
    from django.conf import settings

    import config.wsgi  # noqa: F401  (loaded as gunicorn loads it when the process starts)

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test client's host
    call = _request(view)
    start = time.perf_counter()
    first = call()
    cold = (time.perf_counter() - start) * 1000
    assert first.status_code < 300, (view, first.status_code)
    preparing = b"being prepared" in _body(first)
    while preparing and b'data-job-status="running"' in _body(call(status=True)):
        time.sleep(0.1)
    ready = (time.perf_counter() - start) * 1000
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = call()
        samples.append((time.perf_counter() - start) * 1000)
        assert response.status_code < 300, (view, response.status_code)
    return {
        "view": view,
        "cold_ms": cold,
        "ready_ms": ready if preparing else None,
        "warm_ms": statistics.median(samples),
        "bytes": len(response.content),
        "html_bytes": len(_body(response)),
        "preparing": preparing,
    }


def _body(response: Any) -> bytes:
    """The response's content, uncompressed."""
    content: bytes = response.content
    return gzip.decompress(content) if response.get("Content-Encoding") == "gzip" else content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5, help="Warm timings: median of this many.")
    parser.add_argument(
        "--views", nargs="+", choices=VIEWS, default=VIEWS, help="Time only these views."
    )
    parser.add_argument("--measure", choices=VIEWS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.repeat)))
        return
    database = prepare(args.nodes)
    try:
        print(f"{'view':<16} {'cold':>9} {'ready':>9} {'warm':>9} {'bytes':>9} {'gzip':>9}")
        for view in args.views:
            result = _child(view, args.repeat, database)
            ready = f"{result['ready_ms']:.0f}ms" if result["preparing"] else "-"
            print(
                f"{view:<16} {result['cold_ms']:>7.0f}ms {ready:>9} {result['warm_ms']:>7.0f}ms "
                f"{result['html_bytes']:>9,} {result['bytes']:>9,}"
            )
    finally:
        shutil.rmtree(database.parent, ignore_errors=True)


def _child(view: str, repeat: int, database: Path) -> dict[str, Any]:
    """Run ``measure(view)`` in a new interpreter on ``database``."""
    env = {**os.environ, "SCHEDBOARD_BENCHMARK_DATABASE": str(database)}
    command = [sys.executable, "-m", "benchmarks.web", "--measure", view, "--repeat", str(repeat)]
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    main()
