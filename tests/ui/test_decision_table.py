"""The decision page's ranked nodes and "why #1 beat #2" in a real browser: at 1280, 1366 and
1920 px no table overflows its card and each node is one short line; at 390 px the page does
not scroll sideways and each node's per-plugin scores are one click away."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.services import load_demo_cluster
from policy.core.choices import DecisionSource, Role
from policy.decisions.models import PlacementDecision
from policy.decisions.services import evaluate_pod
from policy.policies.demo import seed_demo_policies
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {
        # Preferences of every kind, so every score plugin of the profile scores the pod: the
        # widest ranked table the profile can make.
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "preference": {
                            "matchExpressions": [
                                {"key": "pool", "operator": "In", "values": ["general"]}
                            ]
                        },
                    }
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
        "containers": [
            {
                "name": "app",
                "image": "nginx",
                "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}},
            }
        ],
    },
}
# Each table against the card it sits in, and the tallest first line of a ranked node.
OVERFLOWS = """() => Array.from(document.querySelectorAll('main table')).map(table => {
  const card = table.closest('.card, section') || document.querySelector('main');
  const cardBox = card.getBoundingClientRect();
  const box = table.getBoundingClientRect();
  const wrap = table.closest('.table-wrap');
  return {id: table.id || table.className, right: Math.round(box.right - cardBox.right),
          scrolls: wrap ? wrap.scrollWidth - wrap.clientWidth : 0};
}).filter(t => t.right > 1 || t.scrolls > 1)"""
TALLEST_ROW = """() => Math.max(...Array.from(
  document.querySelectorAll('table.ranked-table tbody.ranked-node > tr:first-child'))
  .map(tr => tr.getBoundingClientRect().height))"""


@pytest.fixture
def decision(transactional_db: None) -> Any:
    snapshot = load_demo_cluster(nodes=60)
    seed_demo_policies(snapshot.cluster)  # default-scheduler with LoadAwareScheduling
    yield evaluate_pod(snapshot.cluster, POD, source=DecisionSource.UI)


def _check_margin(page: Any) -> None:
    margin = page.locator("#margin")
    rows = margin.locator("table.margin-table tbody tr")
    deltas = []
    for k in range(rows.count() - 1):
        deltas.append(int(rows.nth(k).locator("td.delta").inner_text().replace("+", "")))
    gap = int(rows.last.locator("td.delta").inner_text().replace("+", ""))
    assert sum(deltas) == gap  # the plugins' differences add up to the gap
    assert deltas == sorted(deltas, key=lambda d: -abs(d))  # the largest part first
    sentence = margin.locator("p").first.inner_text()
    if gap:
        assert re.search(rf"{gap} points? more than", sentence), sentence
    else:
        assert "tie at" in sentence


@pytest.mark.parametrize("width", [1280, 1366, 1920])
def test_ranked_nodes_fit_their_card(
    page: Any, live_server: Any, decision: PlacementDecision, screenshot: Shot, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/decisions/{decision.pk}/")
    table = page.locator("table.ranked-table")
    assert table.locator("tbody.ranked-node").count() == 10
    headings = table.locator("thead th.plugin-col")
    assert headings.count() >= 6 and headings.first.is_visible()
    assert page.evaluate(OVERFLOWS) == []
    assert page.evaluate(TALLEST_ROW) <= 48
    # The breakdown opens under its node's line: raw -> normalized x weight, and LoadAware.
    first = table.locator("tbody.ranked-node").first
    first.locator("summary").click()
    parts = first.locator(".score-parts li")
    assert parts.count() == headings.count()
    assert re.search(r"\d+ = \d+ \(raw \d+\) × \d+", parts.first.inner_text())
    assert "LoadAware:" in first.locator("tr.breakdown").inner_text()
    assert page.evaluate(OVERFLOWS) == []
    _check_margin(page)
    screenshot(page, f"decision-ranked-{width}")


def test_ranked_nodes_at_a_phones_width(
    page: Any, live_server: Any, decision: PlacementDecision, screenshot: Shot
) -> None:
    page.set_viewport_size(PHONE)
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/decisions/{decision.pk}/")
    assert page.evaluate(WIDEST) is None
    assert page.evaluate(OVERFLOWS) == []  # no table scrolls inside its box either
    table = page.locator("table.ranked-table")
    assert not table.locator("thead th.plugin-col").first.is_visible()
    first = table.locator("tbody.ranked-node").first
    first.locator("summary").click()
    parts = first.locator(".score-parts li")
    assert parts.count() >= 6 and parts.first.is_visible()
    assert page.evaluate(WIDEST) is None
    assert page.evaluate(OVERFLOWS) == []
    assert page.evaluate(TALLEST_ROW) <= 48
    _check_margin(page)
    screenshot(page, "phone-decision-ranked")
