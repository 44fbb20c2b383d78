"""Explanation bases under concurrent evaluations on PostgreSQL: a page evaluation holding the
snapshot's base while an API decision is made and recorded on it is no deadlock, and the first
decisions on a snapshot make one base between them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection, connections, transaction

from policy.clusters.models import ClusterSnapshot
from policy.clusters.services import load_demo_cluster
from policy.decisions import services
from policy.decisions.models import ExplanationBase, PlacementDecision
from tests.conftest import NOW
from tests.scoring.builders import make_container, make_pod

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row locks need PostgreSQL (set DATABASE_URL)"
    ),
]
WAIT = 30.0  # seconds before a thread that never gets its turn fails the test


def pod(name: str) -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", {"cpu": "100m"})])


@pytest.fixture
def snapshot(transactional_db: None) -> Iterator[ClusterSnapshot]:
    stored = load_demo_cluster(nodes=6, now=NOW)
    yield stored
    connections.close_all()


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def waiting_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row and row[0] == "Lock")


def in_thread(target: Callable[[], Any], errors: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_until(condition: Callable[[], bool]) -> None:
    """Poll the database's state until ``condition`` holds (fail after :data:`WAIT`)."""
    deadline = time.monotonic() + WAIT
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the other transaction never came to wait for a lock")
        pause.wait(0.02)


def test_a_page_decision_and_an_api_decision_on_one_base_do_not_deadlock(
    snapshot: ClusterSnapshot,
) -> None:
    cluster = snapshot.cluster
    services.evaluate_pod(cluster, pod("first"))  # the snapshot's base

    holds_base, writer_pid = threading.Event(), []
    errors: list[BaseException] = []

    def page_evaluation() -> None:
        with transaction.atomic():  # the decision's transaction, kept open until the writer waits
            services.evaluate_pod(cluster, pod("page"))
            holds_base.set()
            wait_until(lambda: bool(writer_pid) and waiting_on_a_lock(writer_pid[0]))

    def explanation_writer() -> None:
        assert holds_base.wait(WAIT)
        writer_pid.append(backend_pid())
        services.evaluate_and_record(cluster, pod("api"), page=(None, None))

    threads = [in_thread(page_evaluation, errors), in_thread(explanation_writer, errors)]
    for thread in threads:
        thread.join(WAIT)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)
    assert PlacementDecision.objects.count() == 3
    [base] = ExplanationBase.objects.all()
    assert set(PlacementDecision.objects.values_list("explanation_base", flat=True)) == {base.pk}


def test_the_first_decisions_on_a_snapshot_make_one_base(snapshot: ClusterSnapshot) -> None:
    cluster = snapshot.cluster
    holds_base, second_pid = threading.Event(), []
    errors: list[BaseException] = []

    def first() -> None:
        with transaction.atomic():
            services.evaluate_pod(cluster, pod("one"))
            holds_base.set()
            wait_until(lambda: bool(second_pid) and waiting_on_a_lock(second_pid[0]))

    def second() -> None:
        assert holds_base.wait(WAIT)
        second_pid.append(backend_pid())
        services.evaluate_pod(cluster, pod("two"))

    threads = [in_thread(first, errors), in_thread(second, errors)]
    for thread in threads:
        thread.join(WAIT)
    assert not errors, errors
    [base] = ExplanationBase.objects.all()
    assert PlacementDecision.objects.filter(explanation_base=base).count() == 2
