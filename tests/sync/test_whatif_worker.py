"""What-if comparisons on a real Celery worker process: progress is visible while it runs, a
cancel stops it, and the worker goes on to the next comparison. Needs PostgreSQL and a broker
(skipped on the embedded default, required in CI)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from policy.clusters.services import load_demo_cluster
from policy.core.choices import WhatIfStatus
from policy.decisions import whatif
from policy.decisions.models import WhatIfRun
from policy.policies.demo import seed_demo_policies
from tests.sync.worker import (  # noqa: F401 (fixtures)
    Worker,
    committed_db,
    wait_for,
    workers,
)

WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: many, namespace: default}
spec:
  replicas: %d
  selector: {matchLabels: {app: many}}
  template:
    metadata: {labels: {app: many}}
    spec:
      containers:
      - name: c
        image: busybox
        resources: {requests: {cpu: 10m, memory: 16Mi}}
"""
STORED = whatif.ConfigurationInput("stored")
DEFAULTS = whatif.ConfigurationInput("defaults")


def fetch(run_id: int) -> WhatIfRun:
    return WhatIfRun.objects.get(pk=run_id)


def test_progress_cancel_and_the_next_comparison_on_a_worker(
    committed_db: None,  # noqa: F811
    workers: Callable[[], Worker],  # noqa: F811
) -> None:
    cluster = load_demo_cluster(nodes=200).cluster
    seed_demo_policies(cluster)
    workers()
    big = whatif.start(
        cluster,
        workload_source="manifests",
        workload=WORKLOAD % 5000,
        baseline=STORED,
        candidate=DEFAULTS,
    )

    def midway() -> WhatIfRun | None:
        run = fetch(big.pk)
        return run if run.status == WhatIfStatus.RUNNING and run.progress_done > 0 else None

    seen = wait_for(midway, 120, "the worker to report progress")
    assert 0 < seen.progress_done < seen.progress_total == 10_000
    assert seen.heartbeat is not None and seen.worker

    assert whatif.cancel(seen)
    small = whatif.start(
        cluster,
        workload_source="manifests",
        workload=WORKLOAD % 20,
        baseline=STORED,
        candidate=DEFAULTS,
    )
    done: Any = wait_for(
        lambda: (
            (run := fetch(small.pk)).status not in (WhatIfStatus.QUEUED, WhatIfStatus.RUNNING)
            and run
        ),
        120,
        "the second comparison",
    )
    assert done.status == WhatIfStatus.SUCCEEDED, done.error
    assert done.progress_done == done.progress_total == 40
    assert [r["placed"] for r in done.result["runs"]] == [20, 20]
    # The one worker took the second comparison only once it had left the first: what the
    # first shows now is final, and it stopped short of its end.
    stopped = fetch(big.pk)
    assert stopped.status == WhatIfStatus.CANCELLED and stopped.result is None
    assert seen.progress_done <= stopped.progress_done < stopped.progress_total
