"""Page and API evaluations at once on PostgreSQL, for a while: every answer's status counted,
and any server error (a deadlock on the explanation bases above all) reported.

Run outside the test suite, against a PostgreSQL server (a throwaway ``test_…`` database is
created there and dropped after):
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/schedboard \\
        .venv/bin/python -m benchmarks.mixed_evaluations [--seconds 300] [--threads 3]

Each of ``--threads`` page threads posts the evaluate form and each API thread posts
``POST /api/v1/clusters/{id}/evaluate/`` (answered in-process, as on the embedded default,
each decision recorded whole), while a new snapshot is stored
every ``--snapshot-every`` seconds, so the first decisions on a snapshot race to make its
base. Exit status 1 when any answer was a 5xx. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections import Counter
from datetime import timedelta
from typing import Any

import django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--threads", type=int, default=3, help="of each kind")
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--snapshot-every", type=float, default=20.0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("API_EVALUATE_RATE", "100000/minute")
    django.setup()
    from django.db import connection
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases

    setup_test_environment()  # the test client's host, as in the test suite
    if connection.vendor != "postgresql":
        raise SystemExit("needs PostgreSQL: set DATABASE_URL")
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        statuses = run(args)
    finally:
        from django.db import connections

        connections.close_all()
        teardown_databases(databases, verbosity=0)
    print(dict(sorted(statuses.items())))
    raise SystemExit(1 if any(code >= 500 for code in statuses) else 0)


def run(args: Any) -> Counter[int]:
    from django.contrib.auth.models import Group, User
    from django.db import connections
    from django.test import Client
    from rest_framework.test import APIClient

    from policy.clusters.services import load_demo_cluster, record_snapshot
    from policy.clusters.snapshot_chains import materialize

    stored = load_demo_cluster(nodes=args.nodes)
    viewer = User.objects.create_user(username="mixed-viewer", password="-")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    stop = threading.Event()
    manifest = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\n"
        "spec: {{containers: [{{name: a, image: x, resources: {{requests: {{cpu: 100m}}}}}}]}}\n"
    )

    def count(code: int) -> None:
        with lock:
            statuses[code] += 1

    def pages(n: int) -> None:
        client = Client(raise_request_exception=False)
        client.force_login(viewer)
        i = 0
        while not stop.is_set():
            i += 1
            data = {"cluster": stored.cluster_id, "manifest": manifest.format(name=f"p{n}-{i}")}
            count(client.post("/evaluate/", data).status_code)
        connections.close_all()

    def api(n: int) -> None:
        client = APIClient(raise_request_exception=False)
        client.force_login(viewer)
        url = f"/api/v1/clusters/{stored.cluster_id}/evaluate/"
        i = 0
        while not stop.is_set():
            i += 1
            pod = manifest.format(name=f"a{n}-{i}")
            answer = client.post(url, {"pod": pod}, format="json")
            count(answer.status_code)
            if answer.status_code == 201 and i % 2:  # read back: writes it if still pending
                count(client.get(f"/api/v1/decisions/{answer.json()['id']}/").status_code)
        connections.close_all()

    threads = [threading.Thread(target=pages, args=(n,)) for n in range(args.threads)]
    threads += [threading.Thread(target=api, args=(n,)) for n in range(args.threads)]
    for thread in threads:
        thread.start()
    end, newest = time.monotonic() + args.seconds, stored
    while not stop.wait(min(args.snapshot_every, max(0.0, end - time.monotonic()))):
        if time.monotonic() >= end:
            stop.set()
            break
        newest = record_snapshot(
            newest.cluster, materialize(newest), newest.taken_at + timedelta(minutes=1)
        )
    for thread in threads:
        thread.join()
    return statuses


if __name__ == "__main__":
    main()
