"""In a real browser: a big cluster's dashboard shows the newest snapshot at once when the worker
prepared it; when it has not yet, the previous snapshot while the newest is built, then reloads
itself once it is ready."""

from __future__ import annotations

from typing import Any

import pytest

from policy.clusters.engine import clear_caches as clear_engine_caches
from policy.clusters.services import load_demo_cluster
from policy.core import broker
from policy.core.choices import Role
from policy.web.pages import clear_caches as clear_page_caches
from tests.personas import create_user as make_user
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_dashboard_follows_a_new_snapshot_by_itself(
    page: Any, live_server: Any, settings: Any, monkeypatch: Any
) -> None:
    settings.DASHBOARD_BACKGROUND_BUILD_NODES = 10  # the demo's 60 nodes count as big
    clear_engine_caches()
    clear_page_caches()
    first = load_demo_cluster(nodes=60)
    make_user("dora", Role.VIEWER)
    log_in(page, live_server, "dora")  # lands on the dashboard: built inline
    assert f"snapshot {first.pk} taken" in page.locator("main").inner_text()

    monkeypatch.setattr(broker, "prepare_views", lambda cluster_id: None)  # the worker is behind
    newest = load_demo_cluster(nodes=60)
    page.reload()
    notice = page.get_by_role("status").filter(has_text="is being prepared")
    assert notice.count() == 1
    assert f"snapshot {first.pk} taken" in page.locator("main").inner_text()
    # The notice polls; once the newest snapshot is built the page loads it.
    page.get_by_text(f"snapshot {newest.pk} taken").wait_for()
    assert notice.count() == 0
    clear_engine_caches()
    clear_page_caches()


def test_a_snapshot_the_worker_prepared_is_shown_at_once(
    page: Any, live_server: Any, settings: Any
) -> None:
    settings.DASHBOARD_BACKGROUND_BUILD_NODES = 10
    clear_engine_caches()
    clear_page_caches()
    load_demo_cluster(nodes=60)
    make_user("dora", Role.VIEWER)
    log_in(page, live_server, "dora")
    newest = load_demo_cluster(nodes=60)  # stored and prepared (no broker: in this process)
    clear_page_caches()  # as in another web process: only the stored preparation is there
    page.reload()
    assert f"snapshot {newest.pk} taken" in page.locator("main").inner_text()
    assert page.get_by_role("status").filter(has_text="is being prepared").count() == 0
    clear_engine_caches()
    clear_page_caches()
