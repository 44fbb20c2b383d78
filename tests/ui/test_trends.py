"""Trends in a real browser: the dashboard's utilization and filtered-now charts over the
stored snapshots, with their values as a table, and a node's load over time on its page."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.models import SnapshotTrend
from policy.clusters.services import load_demo_cluster
from policy.policies.demo import seed_demo_policies
from policy.sync.demo import drift_demo_clusters
from policy.web.pages import prepare_newest
from tests.personas import create_user as make_user
from tests.ui.conftest import SCREENSHOTS
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
SNAPSHOTS = 8


@pytest.fixture
def history(transactional_db: None) -> Iterator[Any]:
    """The demo cluster snapshotted every ten minutes, its load drifting as the beat drifts it
    (stored as the NodeMetrics that changed), each snapshot prepared."""
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10 * SNAPSHOTS)
    stored = load_demo_cluster(nodes=60, now=start)
    seed_demo_policies(stored.cluster)
    for k in range(SNAPSHOTS):
        if k:
            assert drift_demo_clusters(start + timedelta(minutes=10 * k))
        # Prepared here, as a worker would: with a broker configured the task is only queued.
        prepare_newest(stored.cluster.pk)
    yield stored.cluster


def test_dashboard_and_node_page_show_trends(
    page: Any, live_server: Any, history: Any, screenshot: Shot
) -> None:
    make_user("vera", "viewer")
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/?cluster={history.pk}")
    section = page.locator("section").filter(has=page.get_by_role("heading", name="Trends"))
    charts = section.locator("figure.chart-box").filter(has=page.locator("svg.timeline"))
    assert charts.count() == 3
    cpu = section.get_by_role("img", name=re.compile(r"^cpu load of the nodes"))
    assert cpu.is_visible()
    assert f"over the last {SNAPSHOTS} snapshots" in (cpu.get_attribute("aria-label") or "")
    assert section.get_by_role("img", name=re.compile(r"nodes filtered now")).is_visible()
    section.get_by_text(f"Values of the last {SNAPSHOTS} snapshots").click()
    table = section.get_by_role("table", name=re.compile(r"^Node load"))
    assert table.locator("tbody tr").count() == SNAPSHOTS
    section.screenshot(path=str(SCREENSHOTS / "dashboard-trends.png"))
    screenshot(page, "dashboard-with-trends")
    recorded = SnapshotTrend.objects.filter(snapshot__cluster=history)
    assert len(set(recorded.values_list("snapshot_id", flat=True))) == SNAPSHOTS

    node = page.locator("#nodes table tbody tr a").first
    name = node.inner_text().strip()
    node.click()
    page.wait_for_url(re.compile(r"/nodes/"))
    trend = page.locator("section").filter(has=page.get_by_role("heading", name="Load over time"))
    assert trend.get_by_role(
        "img", name=re.compile(rf"^Load of node {re.escape(name)}")
    ).is_visible()
    trend.get_by_text(f"Values of the last {SNAPSHOTS} snapshots").click()
    assert trend.locator("tbody tr").count() == SNAPSHOTS
    trend.screenshot(path=str(SCREENSHOTS / "node-trend.png"))
    screenshot(page, "node-with-trend")
