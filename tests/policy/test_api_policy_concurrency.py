"""Concurrent writes through the real stack: separate threads, separate database connections,
real transactions (``transaction=True``). Run against PostgreSQL (``DATABASE_URL``), where
``select_for_update`` really locks; SQLite serializes writers anyway.

The services validate the whole configuration while holding its lock. There the first request
waits until PostgreSQL shows the other one waiting for that lock (polled in ``pg_locks``), so
the second request certainly arrives while the first holds the lock, however slow the machine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection, connections
from rest_framework.test import APIClient

from policy.accounts.services import create_token
from policy.clusters.models import Cluster
from policy.policies import documents
from policy.policies.models import SchedulerConfiguration, SchedulerProfile

pytestmark = [
    # Real commits, so the threads see each other's rows. (The flush afterwards leaves the
    # role groups in place: they come back with post_migrate, see policy.accounts.roles.)
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row locks need PostgreSQL (set DATABASE_URL)"
    ),
]
WAIT = 20  # seconds a request may take to reach the lock on a busy machine


@pytest.fixture
def key(db: None) -> str:
    user = User.objects.create_user("eddie", password="x")
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    return create_token(user, name="race")[1]


@dataclass
class LockHeld:
    """What the first validation saw: ``holding`` is set once it runs (its request holds the
    configuration's lock), ``waited`` once another request was seen waiting for that lock."""

    holding: threading.Event = field(default_factory=threading.Event)
    waited: bool = False


def others_wait_for_the_configuration() -> bool:
    """Whether another transaction, blocked by this connection's, waits to lock a configuration
    row (it holds the row's tuple lock while it waits for this transaction to end)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'tuple' AND relation = %s::regclass"
            " AND pg_backend_pid() = ANY(pg_blocking_pids(pid))",
            [SchedulerConfiguration._meta.db_table],
        )
        return bool(cursor.fetchone()[0])


def poll(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` came true within :data:`WAIT` seconds."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def lock_held(monkeypatch: pytest.MonkeyPatch) -> LockHeld:
    """The first validation (its request holds the configuration's lock) signals ``holding``,
    then goes on only once another request waits for that lock; later ones run at once."""
    real = documents.validate_tree
    held = LockHeld()
    first = threading.Lock()

    def validate(tree: Any, target: Any = None) -> Any:
        if first.acquire(blocking=False):  # never released: only the first call waits
            held.holding.set()
            held.waited = poll(others_wait_for_the_configuration)
        return real(tree, target)

    monkeypatch.setattr(documents, "validate_tree", validate)
    return held


@pytest.fixture
def configuration(db: None) -> SchedulerConfiguration:
    cluster = Cluster.objects.create(name="race")
    configuration = SchedulerConfiguration.objects.create(cluster=cluster)
    SchedulerProfile.objects.create(configuration=configuration, scheduler_name="a", position=0)
    SchedulerProfile.objects.create(configuration=configuration, scheduler_name="b", position=1)
    return configuration


def race(key: str, *requests: Callable[[APIClient], Any]) -> list[Any]:
    """Run each request in its own thread (own connection), all released at once."""
    barrier = threading.Barrier(len(requests))
    results: list[Any] = [None] * len(requests)

    def run(i: int, request: Callable[[APIClient], Any]) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        try:
            barrier.wait()
            results[i] = request(client)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, r)) for i, r in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.fixture(autouse=True)
def _close_connections() -> Iterator[None]:
    yield
    connections.close_all()


def test_two_writers_with_the_same_etag_one_gets_412(
    key: str, configuration: SchedulerConfiguration, lock_held: LockHeld
) -> None:
    profile = configuration.profiles.get(scheduler_name="a")
    url = f"/api/v1/profiles/{profile.pk}/"

    def rename(name: str) -> Callable[[APIClient], Any]:
        return lambda c: c.patch(
            url, {"scheduler_name": name}, format="json", HTTP_IF_MATCH='W/"1"'
        )

    first, second = race(key, rename("x"), rename("y"))
    assert lock_held.waited, "the second request never waited for the configuration's lock"
    assert sorted([first.status_code, second.status_code]) == [200, 412]
    winner = first if first.status_code == 200 else second
    loser = second if winner is first else first
    assert 'W/"2"' in loser.json()["detail"]
    profile.refresh_from_db()
    assert profile.version == 2
    assert profile.scheduler_name == winner.json()["scheduler_name"]
    configuration.refresh_from_db()
    assert configuration.version == 2  # one change, not two


def test_edits_of_two_profiles_are_validated_one_after_the_other(
    key: str, configuration: SchedulerConfiguration, lock_held: LockHeld
) -> None:
    """Each rename alone is valid; together they would duplicate a schedulerName."""
    a = configuration.profiles.get(scheduler_name="a")
    b = configuration.profiles.get(scheduler_name="b")

    def rename(profile: SchedulerProfile) -> Callable[[APIClient], Any]:
        url = f"/api/v1/profiles/{profile.pk}/"
        return lambda c: c.patch(url, {"scheduler_name": "same"}, format="json", HTTP_IF_MATCH="*")

    first, second = race(key, rename(a), rename(b))
    assert lock_held.waited, "the second request never waited for the configuration's lock"
    assert sorted([first.status_code, second.status_code]) == [200, 400]
    refused = first if first.status_code == 400 else second
    assert refused.json()["errors"][0]["type"] == "FieldValueDuplicate"
    names = sorted(configuration.profiles.values_list("scheduler_name", flat=True))
    assert names in (["a", "same"], ["b", "same"])


def test_a_profile_edit_makes_the_configuration_etag_stale(
    key: str, configuration: SchedulerConfiguration, lock_held: LockHeld
) -> None:
    profile = configuration.profiles.get(scheduler_name="a")
    config_url = f"/api/v1/scheduler-configurations/{configuration.pk}/"
    profile_url = f"/api/v1/profiles/{profile.pk}/"
    edit_profile = lambda c: c.patch(  # noqa: E731
        profile_url, {"percentage_of_nodes_to_score": 50}, format="json", HTTP_IF_MATCH='W/"1"'
    )

    def edit_configuration(client: APIClient) -> Any:
        assert lock_held.holding.wait(WAIT)  # second: the profile edit holds the lock
        return client.patch(config_url, {"parallelism": 4}, format="json", HTTP_IF_MATCH='W/"1"')

    profile_response, config_response = race(key, edit_profile, edit_configuration)
    assert lock_held.waited, "the configuration edit never waited for the configuration's lock"
    assert profile_response.status_code == 200
    assert config_response.status_code == 412
    configuration.refresh_from_db()
    assert configuration.version == 2 and configuration.parallelism is None
