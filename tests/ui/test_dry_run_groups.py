"""A dry-run that writes the same annotation on many nodes, in a real browser at a laptop's and
a phone's width: one line for all of them, the node list one click away, and the field read
whole (not wrapped letter by letter)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.services import load_demo_cluster
from policy.core.choices import Role
from policy.policies.models import NodeThresholdPolicy
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]


@pytest.fixture
def policy(transactional_db: None) -> NodeThresholdPolicy:
    cluster = load_demo_cluster(nodes=60).cluster
    return NodeThresholdPolicy.objects.create(
        cluster=cluster, name="every-node", node_selector={}, usage_thresholds={"cpu": 70}
    )


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_identical_changes_read_as_one_line(
    page: Any,
    live_server: Any,
    screenshot: Shot,
    policy: NodeThresholdPolicy,
    viewport: dict[str, int],
) -> None:
    page.set_viewport_size(viewport)
    make_user("otto", Role.OPERATOR)
    log_in(page, live_server, "otto")
    page.goto(f"{live_server.url}/clusters/{policy.cluster_id}/sync/")
    page.get_by_role("button", name="Push to cluster…").click()
    page.wait_for_url(re.compile(r"/sync/plan/\d+/$"))
    rows = page.locator("table.changes tbody tr")
    assert rows.count() == 1
    line = rows.first
    count = int(line.get_attribute("data-count"))
    assert count > 40  # every node but those annotated by someone else
    assert '{"usageThresholds":{"cpu":70}}' in line.inner_text()
    field = line.locator("code.field")
    # The field keeps a readable width: a few lines at most, never one per letter.
    box = field.evaluate("el => el.getBoundingClientRect().toJSON()")
    line_height = field.evaluate("el => parseFloat(getComputedStyle(el).lineHeight) || 20")
    assert box["width"] >= 150 and box["height"] <= 5 * line_height, (box, line_height)
    assert page.evaluate(WIDEST) is None
    after = line.locator("td").last.get_by_text('{"usageThresholds":{"cpu":70}}')
    assert after.evaluate("el => el.getBoundingClientRect().right") <= viewport["width"]
    screenshot(page, f"dry-run-grouped-{viewport['width']}")

    line.get_by_role("link", name=re.compile(rf"{count} Nodes")).click()
    page.wait_for_url(re.compile(r"\?group=1"))
    listed = page.locator("table.changes .object-list li")
    assert listed.count() == count  # 60 nodes: one page
    assert page.locator("table.changes .object-list").is_visible()
    assert page.evaluate(WIDEST) is None
    notes = page.locator("section", has=page.get_by_role("heading", name="Notes"))
    assert re.search(r"\d+ nodes: \S+ was set by someone else; left alone", notes.inner_text())
