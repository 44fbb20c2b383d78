"""The dry-run's review page on a 5,000-node cluster where one threshold policy changes every
node's annotation: the page's time and size, identical changes grouped.

Run outside the test suite:
    .venv/bin/python -m benchmarks.dry_run [--nodes 5000] [--repeat 5]

Prepares a fresh SQLite database with the demo cluster as ``benchmarks.web`` does, adds a
threshold policy on every node and an operator, runs the dry-run once (its own time is
printed, not the subject), then, once the process has served the Sync page, times ``GET`` of
the review page (the first request and the median of ``--repeat`` more) and of one page of
the grouped nodes' list. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks.web import _body, prepare

OPERATOR = "benchmark-operator"


def _timed(call: Any, repeat: int) -> tuple[float, float, Any]:
    start = time.perf_counter()
    response = call()
    first = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, response.status_code
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = call()
        samples.append((time.perf_counter() - start) * 1000)
    return first, statistics.median(samples), response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    prepare(options.nodes)
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from policy.clusters.models import Cluster
    from policy.policies.models import NodeThresholdPolicy
    from policy.sync import services as sync_services

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    cluster = Cluster.objects.get()
    NodeThresholdPolicy.objects.create(
        cluster=cluster, name="every-node", node_selector={}, usage_thresholds={"cpu": 70}
    )
    operator = User.objects.create_user(username=OPERATOR, password="-")
    operator.groups.add(Group.objects.get_or_create(name="operator")[0])
    start = time.perf_counter()
    plan = sync_services.plan(cluster)
    print(
        f"dry-run: {len(plan.changes)} changes, {len(plan.notes)} notes, "
        f"planned in {time.perf_counter() - start:.1f} s"
    )
    client = Client(HTTP_ACCEPT_ENCODING="gzip")
    client.force_login(operator)
    # A web process that has served a page before: its templates and code are loaded.
    start = time.perf_counter()
    assert client.get(f"/clusters/{cluster.pk}/sync/").status_code == 200
    print(f"the process's first page (the Sync page): {time.perf_counter() - start:.1f} s")
    url = f"/clusters/{cluster.pk}/sync/plan/{plan.pk}/"
    for name, target in (
        ("review page", url),
        ("grouped nodes, page 2", f"{url}?group=2&objects=2"),
    ):
        first, warm, response = _timed(lambda t=target: client.get(t), options.repeat)
        print(
            f"{name}: first {first:.0f} ms, warm {warm:.0f} ms (median of {options.repeat}), "
            f"{len(_body(response)) / 1024:.0f} KB HTML, {len(response.content) / 1024:.0f} KB sent"
        )


if __name__ == "__main__":
    main()
