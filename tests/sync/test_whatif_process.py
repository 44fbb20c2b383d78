"""Without a broker (the embedded default), a what-if comparison runs in a process of its own
(``manage.py run_what_if``): the request answers at once, progress is visible while it runs, a
cancel stops it. Needs PostgreSQL (the process opens the test database); no broker."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from policy.clusters.services import load_demo_cluster
from policy.core import processes
from policy.core.choices import WhatIfStatus
from policy.decisions import whatif
from policy.decisions.models import WhatIfRun
from policy.policies.demo import seed_demo_policies
from tests.sync.test_whatif_worker import DEFAULTS, STORED, WORKLOAD, fetch
from tests.sync.worker import committed_db, wait_for  # noqa: F401 (fixtures)


@pytest.fixture
def own_process(committed_db: None, settings: Any, monkeypatch: Any) -> None:  # noqa: F811
    if connection.vendor != "postgresql":
        pytest.skip("the own-process test needs PostgreSQL (the process opens the test database)")
    settings.WHATIF_OWN_PROCESS = True
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tests.sync.worker_settings")
    monkeypatch.setenv("SCHEDBOARD_TEST_DATABASE", str(connection.settings_dict["NAME"]))
    monkeypatch.setenv("SCHEDBOARD_TEST_QUEUE", "schedboard-whatif-process")


def the_process() -> Any:
    [started] = processes.children()
    return started


def test_the_api_answers_at_once_and_the_comparison_runs_in_its_own_process(
    own_process: None, client: Client
) -> None:
    cluster = load_demo_cluster(nodes=60).cluster
    seed_demo_policies(cluster)
    editor = User.objects.create_superuser("whatif-process", password="x")
    client.force_login(editor)
    body = {
        "cluster": cluster.pk,
        "workload": WORKLOAD % 20,
        "baseline": {"source": "stored"},
        "candidate": {"source": "defaults"},
    }
    answer = client.post("/api/v1/what-if/", body, content_type="application/json")
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == WhatIfStatus.QUEUED  # not run in the request
    process = the_process()
    assert process.wait(timeout=120) == 0
    done = fetch(answer.json()["id"])
    assert done.status == WhatIfStatus.SUCCEEDED, done.error
    assert done.worker == f"process {process.pid}"
    assert [r["placed"] for r in done.result["runs"]] == [20, 20]


def test_a_cancel_stops_the_process_and_its_progress(own_process: None) -> None:
    cluster = load_demo_cluster(nodes=200).cluster
    seed_demo_policies(cluster)
    big = whatif.start(
        cluster,
        workload_source="manifests",
        workload=WORKLOAD % 5000,
        baseline=STORED,
        candidate=DEFAULTS,
    )
    process = the_process()

    def midway() -> WhatIfRun | None:
        run = fetch(big.pk)
        return run if run.status == WhatIfStatus.RUNNING and run.progress_done > 0 else None

    seen = wait_for(midway, 120, "the process to report progress")
    assert whatif.cancel(seen)
    assert process.wait(timeout=60) == 0  # it noticed at its next progress write and ended
    stopped = fetch(big.pk)
    assert stopped.status == WhatIfStatus.CANCELLED and stopped.result is None
    assert stopped.progress_done < stopped.progress_total
