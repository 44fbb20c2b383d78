"""The policy pages in a real browser, as reported problems describe them: a threshold policy's
preview at a chosen local time and while its window is open, with the cluster's time zone next
to the window and a visible warning naming a selector that matches no node; selectors, mappings
and names read as people write them, history with the forms' labels and only what changed; a
new collect policy starting as the cluster default while there is none. Screenshots go to
``artifacts/screenshots/``; at a phone's width nothing scrolls sideways."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policy.accounts.changes import ChangeContext
from policy.clusters.models import Cluster
from policy.clusters.services import load_demo_cluster
from policy.policies import services as policies
from policy.policies.models import NodeMetricCollectPolicy, NodeThresholdPolicy
from tests.personas import create_user as make_user
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
PHONE = {"width": 390, "height": 844}
SELECTOR = {
    "matchLabels": {"pool": "general"},
    "matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a", "b"]}
    ],
}
SELECTOR_TEXT = "pool=general, topology.kubernetes.io/zone in (b,eu-west-1a)"


@pytest.fixture
def cluster(transactional_db: None) -> Iterator[Cluster]:
    """The demo cluster, in Berlin's time zone."""
    snapshot = load_demo_cluster(nodes=30)
    snapshot.cluster.timezone = "Europe/Berlin"
    snapshot.cluster.save()
    yield snapshot.cluster


def submit(page: Any, button: str) -> None:
    """Press a form's button and wait for the page it answers with."""
    with page.expect_navigation():
        page.get_by_role("button", name=button, exact=True).click()


def fits_a_phone(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"])


def test_threshold_preview_at_a_time_while_open_and_a_selector_matching_nothing(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.goto(f"{live_server.url}/policies/thresholds/new/?parent={cluster.pk}")
    main = page.locator("main")
    assert "Daily time window (time zone Europe/Berlin, the cluster's)" in main.inner_text()
    page.get_by_label("Name", exact=True).fill("night-gpu")
    page.get_by_label("Node selector (YAML)").fill("matchLabels:\n  pool: gpu")
    page.locator("[name=usage_thresholds-resource]").first.fill("cpu")
    page.locator("[name=usage_thresholds-value]").first.fill("40")
    page.get_by_label("Active from").fill("22:00")
    page.get_by_label("Active until").fill("06:00")

    # At a chosen local time inside the window: which node gets which annotation then.
    page.get_by_label("Evaluate the preview").select_option("at")
    page.get_by_label("Preview at (local time)").fill("02:30")
    submit(page, "Preview")
    preview = page.locator("#preview")
    text = preview.inner_text()
    assert "Evaluated at 02:30 (02:30 Europe/Berlin, today)" in text
    assert "its time window is open then" in text
    table = page.locator("#preview-annotations").inner_text()
    assert '{"usageThresholds":{"cpu":40}}' in table and "night-gpu" in table
    screenshot(page, "policy-editor-threshold-preview-at")

    # While the window is open: evaluated at its start.
    page.get_by_label("Evaluate the preview").select_option("window")
    submit(page, "Preview")
    text = page.locator("#preview").inner_text()
    assert "Evaluated while its time window is open (22:00–06:00), at 22:00" in text
    screenshot(page, "policy-editor-threshold-preview-window")

    # At noon the window is closed: the nodes get no annotation from it.
    page.get_by_label("Evaluate the preview").select_option("at")
    page.get_by_label("Preview at (local time)").fill("12:00")
    submit(page, "Preview")
    assert "its time window is closed then" in page.locator("#preview").inner_text()
    assert "(none)" in page.locator("#preview-annotations").inner_text()

    # A selector that matches no node is a visible warning naming it.
    page.get_by_label("Node selector (YAML)").fill("matchLabels:\n  pool: archive")
    submit(page, "Preview")
    warning = page.locator("#no-match")
    assert warning.is_visible()
    assert "The node selector pool=archive matches no node" in warning.inner_text()
    screenshot(page, "policy-editor-threshold-no-match")
    page.set_viewport_size(PHONE)
    assert fits_a_phone(page)
    screenshot(page, "phone-policy-editor-threshold-no-match")
    page.set_viewport_size({"width": 1366, "height": 850})

    submit(page, "Save")
    page.get_by_text("Saved node threshold policy night-gpu").wait_for()
    warning_text = page.locator("#no-match").inner_text()
    assert "The node selector pool=archive matches no node" in warning_text
    screenshot(page, "policy-detail-threshold-no-match")
    saved = NodeThresholdPolicy.objects.get()
    assert saved.node_selector == {"matchLabels": {"pool": "archive"}}

    # The detail page evaluates at a chosen time too.
    saved.node_selector = {"matchLabels": {"pool": "gpu"}}
    saved.save()
    page.goto(f"{live_server.url}/policies/thresholds/{saved.pk}/")
    page.get_by_label("Evaluate", exact=True).select_option("at")
    page.get_by_label("Time (Europe/Berlin)").fill("23:15")
    submit(page, "Evaluate")
    card = page.locator("section[aria-labelledby=hits-h]").inner_text()
    assert card.startswith("Nodes it targets at 23:15")
    assert "window is open at 23:15 (Europe/Berlin, today)" in card
    assert '{"usageThresholds":{"cpu":40}}' in page.locator("#detail-annotations").inner_text()
    screenshot(page, "policy-detail-threshold-at")
    page.set_viewport_size(PHONE)
    assert fits_a_phone(page)
    screenshot(page, "phone-policy-detail-threshold-at")


def test_selectors_mappings_names_and_history_read_as_people_write_them(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    ctx = ChangeContext.system()
    policy = policies.NodeThresholdPolicyService().create(
        {
            "cluster": cluster,
            "name": "general-ab",
            "node_selector": SELECTOR,
            "usage_thresholds": {"cpu": 60, "memory": 85},
        },
        ctx,
    )
    policies.NodeThresholdPolicyService().update(
        policy.pk, {"usage_thresholds": {"cpu": 55, "memory": 85}}, ctx, expected_version=1
    )
    make_user("vera", "viewer")
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/policies/?cluster={cluster.pk}")
    assert SELECTOR_TEXT in page.locator("main").inner_text()
    assert "matchLabels" not in page.content()
    screenshot(page, "policies-index-selectors")

    page.get_by_role("link", name="general-ab").click()
    page.wait_for_url(re.compile(r"/policies/thresholds/\d+/$"))
    main = page.locator("main").inner_text()
    assert SELECTOR_TEXT in main and "matchLabels" not in main and "[]" not in main
    pairs = page.locator("dl.pairs").first
    assert pairs.locator("dt").all_inner_texts() == ["cpu", "memory"]
    assert pairs.locator("dd").all_inner_texts() == ["55", "85"]
    screenshot(page, "policy-detail-threshold-readable")

    page.get_by_role("link", name="History").click()
    page.wait_for_url(re.compile(r"/history/$"))
    first = page.locator(".history-entry").first
    rows = first.locator("tbody tr").all_inner_texts()
    assert len(rows) == 1 and rows[0].startswith("Usage thresholds\t")
    assert "cpu: 60, memory: 85" in rows[0] and "cpu: 55, memory: 85" in rows[0]
    assert "usage_thresholds" not in page.locator("main").inner_text()
    screenshot(page, "policy-history-threshold-changed-only")
    page.get_by_role("link", name="Show every field").click()
    page.wait_for_url(re.compile(r"fields=all"))
    every = page.locator(".history-entry").first.locator("tbody tr").all_inner_texts()
    assert len(every) > 5 and any(row.startswith("Name") for row in every)
    screenshot(page, "policy-history-threshold-every-field")
    page.set_viewport_size(PHONE)
    for path in (
        f"/policies/?cluster={cluster.pk}",
        f"/policies/thresholds/{policy.pk}/",
        f"/policies/thresholds/{policy.pk}/history/",
    ):
        page.goto(f"{live_server.url}{path}")
        assert fits_a_phone(page), path
    screenshot(page, "phone-policy-history-threshold")


def test_a_new_collect_policy_starts_as_the_default_only_while_there_is_none(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.goto(f"{live_server.url}/policies/collect/new/?parent={cluster.pk}")
    box = page.get_by_label("Cluster default")
    assert box.is_checked()
    assert "has no default collect policy yet, so this one starts as the cluster default" in (
        page.locator("main").inner_text()
    )
    screenshot(page, "policy-editor-collect-first-default")
    page.get_by_label("Name", exact=True).fill("everywhere")
    page.get_by_label("Report interval seconds (reportIntervalSeconds)").fill("30")
    submit(page, "Save")
    page.get_by_text("Saved collect policy everywhere").wait_for()
    assert NodeMetricCollectPolicy.objects.get().is_default

    page.goto(f"{live_server.url}/policies/collect/new/?parent={cluster.pk}")
    assert not page.get_by_label("Cluster default").is_checked()
    text = page.locator("main").inner_text()
    assert "default collect policy is everywhere, so this one starts as a per-node override" in text
    page.get_by_label("Name", exact=True).fill("gpu-fast")
    page.get_by_label("Node selector (YAML)").fill("matchLabels:\n  pool: gpu")
    page.get_by_label("Report interval seconds (reportIntervalSeconds)").fill("10")
    screenshot(page, "policy-editor-collect-override")
    submit(page, "Save")
    page.get_by_text("Saved collect policy gpu-fast").wait_for()
    page.goto(f"{live_server.url}/policies/?cluster={cluster.pk}")
    assert "selector pool=gpu (priority 0)" in page.locator("main").inner_text()
    screenshot(page, "policies-index-collect")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/policies/collect/new/?parent={cluster.pk}")
    assert fits_a_phone(page)
    screenshot(page, "phone-policy-editor-collect-override")
