"""Shared fixtures: personas for each role (as healthchecks' BaseTestCase), API clients,
a small demo cluster and token helpers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.personas import PASSWORD, create_user

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


_DB_FIXTURES = {"db", "transactional_db", "live_server"}  # what pytest-django looks for


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """scripts/test splits the run over processes, which tell tests apart by id: two tests
    with one id would silently run as one."""
    counts = Counter(item.nodeid for item in items)
    shared = sorted(nodeid for nodeid, n in counts.items() if n > 1)
    if shared:
        raise pytest.UsageError(f"{len(shared)} test ids name more than one test: {shared[:5]}")


@pytest.fixture(scope="session")
def django_db_setup(
    django_db_setup: None, django_db_blocker: Any, request: pytest.FixtureRequest
) -> Iterator[None]:
    """pytest-django sets up the test database only when a collected test asks for it (a
    ``django_db`` mark, its database fixtures, a Django test case). The worker tests use
    ``committed_db`` instead, so a run of only those would talk to the configured database
    itself: the test database is set up for them here."""
    from django.test import TransactionTestCase
    from django.test.utils import setup_databases, teardown_databases

    def asks(item: pytest.Item) -> bool:
        names = set(getattr(item, "fixturenames", ()))
        cls = getattr(item, "cls", None)
        django_case = isinstance(cls, type) and issubclass(cls, TransactionTestCase)
        return bool(item.get_closest_marker("django_db") or names & _DB_FIXTURES or django_case)

    items = request.session.items
    if any(asks(item) for item in items) or not any(
        "committed_db" in getattr(item, "fixturenames", ()) for item in items
    ):
        yield
        return
    with django_db_blocker.unblock():
        databases = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    with django_db_blocker.unblock():
        teardown_databases(databases, verbosity=0)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """PBKDF2's deliberate slowness would dominate the suite's run time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def engine_in_process(settings: Any) -> None:
    """Engine questions are answered in the test's process and transaction, broker or not
    (tests of the engine tier start a real engine worker and turn this off); so are what-if
    comparisons."""
    settings.ENGINE_IN_PROCESS = True
    # What-if comparisons run where the test sends them (tests/sync has the own-process test).
    settings.WHATIF_OWN_PROCESS = False


def engine_decision(
    stored: Any, manifest: dict[str, Any], configuration_id: int | None = None
) -> Any:
    """The engine's own :class:`scoring.decision.Decision` for ``manifest`` on ``stored``,
    made apart from any record (what a recorded decision must equal)."""
    from policy.clusters.engine import engine_for, evaluate_on
    from policy.decisions.evaluation import choose_configuration
    from scoring.objects import parse_pod

    choice = choose_configuration(stored.cluster, configuration_id)
    return evaluate_on(stored, engine_for(choice.document, choice.target), parse_pod(manifest))


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    """Stored snapshots are cached per process by id and creation time; tests roll back and
    reuse both, so no test may see what another one built."""
    from django.core.cache import cache

    from policy.clusters.engine import clear_caches as clear_engine_caches
    from policy.clusters.gateway import informer
    from policy.web.pages import clear_caches as clear_page_caches

    clear_engine_caches()
    clear_page_caches()
    informer.forget()  # cluster ids are reused: a cache must not outlive its test's cluster
    cache.clear()  # rate-limit counters of users whose ids the next test reuses
    yield
    clear_engine_caches()
    clear_page_caches()
    informer.forget()


@pytest.fixture
def make_user(db: None) -> Callable[..., User]:
    return create_user


@pytest.fixture
def viewer(make_user: Callable[..., User]) -> User:
    return make_user("vera", "viewer")


@pytest.fixture
def editor(make_user: Callable[..., User]) -> User:
    return make_user("eddie", "editor")


@pytest.fixture
def operator(make_user: Callable[..., User]) -> User:
    return make_user("otto", "operator")


@pytest.fixture
def nobody(make_user: Callable[..., User]) -> User:
    """Logged in, but holding no role."""
    return make_user("nora")


@pytest.fixture
def superuser(db: None) -> User:
    return User.objects.create_superuser(username="root", password=PASSWORD, email="")


@pytest.fixture
def api_client() -> object:
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def demo_snapshot(db: None) -> object:
    from policy.clusters.services import load_demo_cluster

    return load_demo_cluster(nodes=12, now=NOW)


@pytest.fixture
def run_on_commit(celery_eager: None, django_capture_on_commit_callbacks: Any) -> Any:
    """``with run_on_commit(): ...``: on-commit callbacks (task sends) run, tasks eagerly."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def push_now(run_on_commit: Any) -> Callable[[Any], Any]:
    """Push a cluster in this process (eager task, on-commit send) and return the job."""
    from policy.sync import services as sync

    def push(cluster: Any) -> Any:
        with run_on_commit():
            job = sync.push(cluster)
        job.refresh_from_db()
        return job

    return push


@pytest.fixture
def celery_eager() -> Iterator[None]:
    """Run tasks in-process even when a broker is configured (no stray messages in Redis)."""
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous
