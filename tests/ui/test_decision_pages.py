"""A decision's pages in a real browser: filtered groups by reason with their result codes, the
largest one open, which label a node affinity group lacks, the score plugins skipped for the
pod, and NodeResourcesFit's card on a node's page, at a laptop's and at a phone's width."""

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
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
GENERAL_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "build-3", "namespace": "ci"},
    "spec": {
        "nodeSelector": {"pool": "general"},
        "containers": [
            {"name": "job", "image": "busybox", "resources": {"requests": {"cpu": "12"}}}
        ],
    },
}


@pytest.fixture
def decision(transactional_db: None) -> Any:
    """A pod on the 60-node demo cluster that only general nodes with 12 free cores take."""
    snapshot = load_demo_cluster(nodes=60)
    yield evaluate_pod(snapshot.cluster, GENERAL_POD, source=DecisionSource.UI)


def test_filtered_groups_and_skipped_scores(
    page: Any, live_server: Any, decision: PlacementDecision, screenshot: Shot
) -> None:
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/decisions/{decision.pk}/")
    groups = page.locator("details.group")
    # The largest group is open without a click, with both result codes of its one reason.
    largest = groups.first
    assert largest.get_attribute("open") is not None
    summary = largest.locator("summary").inner_text()
    assert "Insufficient cpu" in summary
    assert re.search(r"UnschedulableAndUnresolvable \d+, Unschedulable \d+", summary), summary
    assert page.locator("details.group summary", has_text="Insufficient cpu").count() == 1
    assert largest.locator(".filtered-nodes li").first.is_visible()
    # A group of three or fewer is open too; a larger one other than the first is closed.
    for k in range(groups.count()):
        group = groups.nth(k)
        count = int(group.locator("summary .count").inner_text())
        assert (group.get_attribute("open") is not None) == (k == 0 or count <= 3)
    # The node affinity group names the label needed and the values the nodes have, shown
    # even while the group is closed.
    affinity = page.locator("details.group", has_text="NodeAffinity")
    hint = affinity.locator("summary .hint")
    assert hint.is_visible()
    assert re.fullmatch(
        r"needs pool=general; these nodes have pool=\w+ \(\d+\), pool=\w+ \(\d+\)",
        hint.inner_text(),
    )
    # Score plugins skipped for this pod: named with weights and why, in the page's text colour.
    skipped = page.locator("#skipped-scores")
    text = skipped.inner_text()
    for plugin in ("NodeAffinity", "PodTopologySpread", "InterPodAffinity"):
        assert f"{plugin} (weight 2):" in text
    body_colour = page.evaluate("getComputedStyle(document.body).color")
    item = skipped.locator("li").first
    assert item.evaluate("el => getComputedStyle(el).color") == body_colour
    assert "DynamicResources (score weight 2)" in page.locator("#unmodelled").inner_text()
    screenshot(page, "decision-groups")
    page.set_viewport_size(PHONE)
    assert page.evaluate(WIDEST) is None
    screenshot(page, "phone-decision-groups")


def test_node_resources_fit_card_on_a_nodes_page(
    page: Any, live_server: Any, decision: PlacementDecision, screenshot: Shot
) -> None:
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/decisions/{decision.pk}/")
    page.locator("#winner-heading a").click()
    page.wait_for_url(re.compile(r"/nodes/[^/]+/$"))
    card = page.locator("section", has=page.get_by_role("heading", name="NodeResourcesFit"))
    assert card.is_visible()
    stats = card.locator(".fit-resources .stat")
    assert stats.count() == 3  # cpu, memory, pods
    cpu = stats.first.inner_text()
    assert "cores" in cpu and "pod 12 + on node" in cpu
    assert " Gi" in stats.nth(1).inner_text()
    text = card.inner_text()
    assert "LeastAllocated" in text and "(allocatable − requested)" in text
    rows = card.locator("table tbody tr")
    assert rows.count() == 2
    assert re.search(r"\(\S+ − \S+\) × 100 / \S+ = \d+", rows.first.inner_text())
    raw = card.locator(".summary-line").inner_text()
    assert re.search(r"= (\d+) — the plugin's raw score here: \1$", raw), raw
    # No YAML dump of the plugin's explanation any more.
    assert page.get_by_role("heading", name="NodeResourcesFit", exact=True).count() == 1
    assert "scoredRequested" not in page.content()
    screenshot(page, "decision-node-fit")
    page.set_viewport_size(PHONE)
    assert page.evaluate(WIDEST) is None
    screenshot(page, "phone-decision-node-fit")
