"""The columns that matter are in view at a laptop's and a phone's width, without scrolling
sideways: the dashboard's load against the threshold and whose threshold it is, what-if's side
B and its verdict, the decision's plugin scores. (The dry-run's before → after is checked in
``test_dry_run_groups``.)"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.services import load_demo_cluster
from policy.core.choices import DecisionSource, Role
from policy.decisions.services import evaluate_pod
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import BIG_POD, PHONE, WIDEST

# The live server runs the what-if comparison in-process even when a broker is configured.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_eager")]

Shot = Callable[[Any, str], Path]
IN_VIEW = """(el, width) => {
  const box = el.getBoundingClientRect();
  return box.left >= 0 && box.right <= width && box.width > 0;
}"""


def in_view(locator: Any, width: int) -> bool:
    return bool(locator.evaluate(IN_VIEW, width))


@pytest.fixture
def decided(transactional_db: None) -> Any:
    cluster = load_demo_cluster(nodes=24).cluster
    return evaluate_pod(cluster, BIG_POD, source=DecisionSource.UI)


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_the_columns_that_matter_are_in_view(
    page: Any, live_server: Any, screenshot: Shot, decided: Any, viewport: dict[str, int]
) -> None:
    width = viewport["width"]
    page.set_viewport_size(viewport)
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")

    # Dashboard: each node's verdict, cpu and memory load against the threshold, its source.
    first = page.locator("table.nodes tbody tr").first
    cells = [first.locator("td.verdict-cell"), *first.locator("td.load").all()]
    cells.append(first.locator("td.threshold-cell"))
    assert len(cells) == 4
    for cell in cells:
        assert in_view(cell, width), cell.inner_text()
    assert re.search(r"\d+%.*/ \d+%", cells[1].inner_text())
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"columns-dashboard-{width}")

    # The decision: every plugin's points for the best node, on its line or in its breakdown.
    page.goto(f"{live_server.url}/decisions/{decided.pk}/")
    best = page.locator("table.ranked-table tbody.ranked-node").first
    points = best.locator("td.plugin-col")
    if points.first.is_visible():
        shown = points.all()
    else:  # a phone: the points move into the node's breakdown
        best.locator("tr.breakdown summary").click()
        shown = best.locator(".score-parts li").all()
    assert len(shown) >= 3
    for cell in shown:
        assert in_view(cell, width), cell.inner_text()
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"columns-decision-{width}")

    # What-if: side B beside side A, and the verdict of each line.
    page.goto(f"{live_server.url}/what-if/")
    candidate = page.get_by_role("group", name="Candidate (B)")
    candidate.get_by_label("Source", exact=True).select_option("defaults")
    page.get_by_role("button", name="Run the comparison").click()
    page.wait_for_url(re.compile(r"/what-if/\d+/$"))
    line = page.locator("table.compare tbody tr", has_text="pods placed").first
    side_b = line.locator("td").nth(1)
    verdict = line.locator("td[data-verdict]")
    assert in_view(side_b, width) and in_view(verdict, width)
    assert verdict.inner_text().strip()
    assert in_view(page.locator("table.compare thead th.side-b"), width)
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"columns-whatif-{width}")
