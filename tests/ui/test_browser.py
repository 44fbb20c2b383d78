"""The main pages in a real browser: log in, the demo cluster's dashboard, evaluating a pod and
reading why a node was filtered, a stored decision, and what a viewer may not see."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from policy import models as policy_models
from policy.clusters.services import load_demo_cluster
from policy.core.choices import DecisionSource, Role
from policy.decisions.services import evaluate_pod
from policy.web.links import edit_links
from tests.personas import create_user as make_user
from tests.ui.session import log_in

# The live server answers from another thread, so data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
BIG_POD = """apiVersion: v1
kind: Pod
metadata:
  name: batch-7
  namespace: analytics
spec:
  containers:
  - name: job
    image: busybox
    resources:
      requests: {cpu: "6", memory: 8Gi}
"""


@pytest.fixture
def cluster(transactional_db: None) -> Any:
    """The demo cluster (60 nodes), with LoadAware enabled when configurations exist yet."""
    snapshot = load_demo_cluster(nodes=60)
    configurations = getattr(policy_models, "SchedulerConfiguration", None)
    if configurations is not None:
        configuration = configurations.objects.create(cluster=snapshot.cluster)
        profile = policy_models.SchedulerProfile.objects.create(
            configuration=configuration,
            scheduler_name="",
            plugins={"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
        )
        policy_models.LoadAwareSchedulingArgs.objects.create(
            profile=profile, usage_thresholds={"cpu": 45, "memory": 90}
        )
    yield snapshot.cluster


def test_log_in_and_read_the_dashboard(
    page: Any, live_server: Any, cluster: Any, screenshot: Shot
) -> None:
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    assert page.title() == "demo — Dashboard · schedboard"
    assert page.get_by_role("heading", name="Cluster demo").is_visible()
    stats = page.get_by_role("region", name="Snapshot summary")
    assert "60" in stats.inner_text() and "filtered by LoadAware now" in stats.inner_text()
    assert page.locator("svg.chart[role=img]").count() >= 2
    screenshot(page, "dashboard")

    # Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"

    # Filter the node list in place: only the nodes LoadAware refuses now, with the reason.
    table = page.locator("#node-table")
    page.get_by_label("Show").select_option("filtered")
    page.wait_for_url(re.compile(r"state=filtered"))
    table.locator("tbody tr").first.wait_for()
    page.wait_for_function("() => !document.querySelector('#node-table').hasAttribute('aria-busy')")
    verdicts = table.locator(".verdict.bad").all_inner_texts()
    assert verdicts and all("node(s)" in v for v in verdicts)
    assert table.locator(".verdict.ok").count() == 0

    # Search, then open a node.
    page.get_by_label("Show").select_option("")
    page.get_by_label("Search").fill("gpu-")
    page.wait_for_url(re.compile(r"q=gpu-"))
    page.wait_for_function(
        "() => [...document.querySelectorAll('#node-table tbody th a')]"
        ".every(a => a.textContent.startsWith('gpu-'))"
    )
    name = table.locator("tbody th a").first.inner_text()
    table.get_by_role("link", name=name).click()
    page.wait_for_url(re.compile(rf"/nodes/{name}/"))
    assert page.title() == f"{name} — demo · schedboard"
    assert page.get_by_role("heading", name="NUMA zones").is_visible()
    assert page.get_by_role("heading", name="Effective thresholds").is_visible()
    screenshot(page, "node")


def test_evaluate_a_pod_and_read_why_nodes_were_filtered(
    page: Any, live_server: Any, cluster: Any, screenshot: Shot
) -> None:
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Evaluate").click()
    expect(page).to_have_title("Evaluate a pod · schedboard")
    page.get_by_label("Pod manifest (YAML or JSON)").fill(BIG_POD)
    screenshot(page, "evaluate")
    page.get_by_role("button", name="Evaluate").click()
    page.wait_for_url(re.compile(r"/decisions/\d+/$"))
    assert page.title().endswith(": analytics/batch-7 · schedboard")
    assert page.get_by_role("heading", name=re.compile("^Winner: ")).is_visible()
    ranked = page.locator("#ranking tbody.ranked-node")  # one per node: its line and breakdown
    assert 1 <= ranked.count() <= 10

    # Filtered nodes come grouped by reason; the first (largest) group is open: read a node's
    # reason.
    groups = page.locator("details.group")
    assert groups.count() >= 1
    first = groups.first
    assert first.get_attribute("open") is not None
    reason = first.locator("summary .reason").inner_text()
    node_line = first.locator(".filtered-nodes li").first
    assert reason in node_line.inner_text()
    if policy_models.__dict__.get("SchedulerConfiguration") is not None:
        summaries = page.locator("#filtered .summary-line")
        text = " ".join(summaries.all_inner_texts())
        assert "threshold from" in text and "measured +" in text
    screenshot(page, "decision")

    # The node's own page: every filter with its reason.
    node_name = node_line.locator("a").inner_text()
    node_line.get_by_role("link", name=node_name).click()
    page.wait_for_url(re.compile(rf"/nodes/{node_name}/$"))
    failing = page.locator("table.data tr.over")
    assert failing.count() >= 1 and reason in page.locator("table.data").first.inner_text()
    screenshot(page, "decision-node")


def test_open_a_stored_decision_from_the_history(
    page: Any, live_server: Any, cluster: Any, screenshot: Shot
) -> None:
    make_user("vera", Role.VIEWER)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "api-3", "namespace": "shop"},
        "spec": {"containers": [{"name": "api", "resources": {"requests": {"cpu": "500m"}}}]},
    }
    stored = evaluate_pod(cluster, pod, source=DecisionSource.API)
    log_in(page, live_server, "vera")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Decisions").click()
    expect(page).to_have_title("Decisions · schedboard")
    page.get_by_label("Namespace").fill("shop")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r"namespace=shop"))
    screenshot(page, "decisions")
    page.get_by_role("link", name="shop/api-3").click()
    page.wait_for_url(f"{live_server.url}/decisions/{stored.pk}/")
    selected = page.locator("#ranking tr.selected th a").inner_text()
    assert selected == stored.selected_node


def test_viewer_sees_no_edit_controls(page: Any, live_server: Any, cluster: Any) -> None:
    make_user("vera", Role.VIEWER)
    make_user("eddie", Role.EDITOR)
    log_in(page, live_server, "vera")
    assert page.get_by_role("link", name=re.compile("^Edit ")).count() == 0
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/nodes/general-b-0001/")
    assert page.get_by_role("link", name=re.compile("^Edit ")).count() == 0
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server, "eddie")
    assert page.get_by_role("link", name=re.compile("^Edit ")).count() == len(edit_links(cluster))


@pytest.mark.parametrize("width", [1024, 1280])
def test_laptop_widths_do_not_scroll_sideways(
    page: Any, live_server: Any, cluster: Any, width: int
) -> None:
    make_user("vera", Role.VIEWER)
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server, "vera")
    for path in ("/", "/evaluate/", "/decisions/", f"/clusters/{cluster.pk}/nodes/gpu-a-0000/"):
        page.goto(f"{live_server.url}{path}")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at {width}px"


def test_long_work_shows_it_is_under_way(
    page: Any, live_server: Any, cluster: Any, screenshot: Shot
) -> None:
    """Evaluating can take seconds on a large cluster: the button says so and cannot be
    pressed twice. (The submit is held back here so the busy state can be looked at.)"""
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/evaluate/")
    page.get_by_label("Pod manifest (YAML or JSON)").fill(BIG_POD)
    page.evaluate(
        "document.querySelector('form[data-busy]')"
        ".addEventListener('submit', e => e.preventDefault())"
    )
    button = page.get_by_role("button", name="Evaluate")
    button.click()
    busy = page.locator("form[data-busy] button.busy")
    busy.wait_for()
    assert busy.is_disabled() and busy.inner_text() == "Evaluating…"
    assert page.locator("form[data-busy]").get_attribute("aria-busy") == "true"
    screenshot(page, "evaluate-busy")


def test_compare_a_pod_with_its_previous_decision(
    page: Any, live_server: Any, cluster: Any, screenshot: Shot
) -> None:
    first = evaluate_pod(cluster, batch_pod(cpu="2"), source=DecisionSource.UI)
    second = evaluate_pod(cluster, batch_pod(cpu="24"), source=DecisionSource.UI)
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.goto(f"{live_server.url}/decisions/{second.pk}/")
    page.get_by_role("link", name="Compare with this pod's previous decision").click()
    page.wait_for_url(re.compile(r"/decisions/compare/"))
    assert page.title() == f"Decisions {first.pk} and {second.pk} compared · schedboard"
    assert page.get_by_role("heading", name=re.compile("^(Both chose|A chose)")).is_visible()
    assert page.locator("tr.over").count() >= 1  # nodes that fit the small pod only
    screenshot(page, "decision-compare")


def batch_pod(cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "batch-7", "namespace": "analytics"},
        "spec": {"containers": [{"name": "job", "resources": {"requests": {"cpu": cpu}}}]},
    }
