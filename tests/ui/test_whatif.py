"""The what-if page in a real browser: start a comparison from the navigation and read the two
sides; follow a queued comparison's progress until the page shows its results by itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from policy.clusters.models import Cluster
from policy.clusters.services import load_demo_cluster
from policy.core.choices import Role, WhatIfStatus
from policy.decisions import whatif
from policy.decisions.models import WhatIfRun
from policy.policies.demo import seed_demo_policies
from policy.web.forms.whatif import SAMPLE_WORKLOAD
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

# The live server runs comparisons in-process even when a broker is configured.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_eager")]

Shot = Callable[[Any, str], Path]


@pytest.fixture
def cluster(transactional_db: None) -> Iterator[Cluster]:
    snapshot = load_demo_cluster(nodes=60)
    seed_demo_policies(snapshot.cluster)
    yield snapshot.cluster


def test_editor_compares_the_stored_configuration_with_the_defaults(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="What-if").click()
    expect(page).to_have_title("What-if · schedboard")
    # The form starts with a sample workload, the stored configuration against the defaults.
    assert page.get_by_label("Manifests (YAML or JSON").input_value().count("kind: Deployment")
    baseline = page.get_by_role("group", name="Baseline (A)")
    assert baseline.get_by_label("Source", exact=True).input_value() == "stored"
    candidate = page.get_by_role("group", name="Candidate (B)")
    candidate.get_by_label("Name (optional)").fill("no LoadAware")
    screenshot(page, "what-if-form")
    page.get_by_role("button", name="Run the comparison").click()

    page.wait_for_url("**/what-if/*/")
    run = WhatIfRun.objects.get()
    heading = page.get_by_role("heading", level=1)
    assert heading.inner_text().endswith("vs no LoadAware")
    assert page.locator("#whatif-status").inner_text().count("succeeded")
    table = page.locator("table.compare")
    placed = table.get_by_role("row", name="pods placed", exact=False).first.inner_text()
    assert placed.split("\t")[1:3] == [str(r["placed"]) for r in run.result["runs"]]
    assert page.locator("svg.chart[role=img]").count() >= 3
    moved = page.locator("#moved tbody tr")
    assert moved.count() == min(run.result["differenceCount"], 100) > 0
    screenshot(page, "what-if")

    page.get_by_role("link", name="Run again with changes").click()
    assert page.get_by_label("Name (optional)").nth(1).input_value() == "no LoadAware"


def stored_run(cluster: Cluster, **fields: Any) -> WhatIfRun:
    """A comparison of the sample workload (40 pods) under the defaults twice, as stored for a
    worker (``fields`` say how far it got)."""
    snapshot = cluster.latest_snapshot()
    assert snapshot is not None
    return WhatIfRun.objects.create(
        cluster=cluster,
        snapshot=snapshot,
        snapshot_taken_at=snapshot.taken_at,
        workload_source="manifests",
        workload=SAMPLE_WORKLOAD,
        pod_count=40,
        baseline_source="defaults",
        baseline_label="defaults",
        candidate_source="defaults",
        candidate_label="defaults again",
        progress_total=80,
        **fields,
    )


def test_a_queued_comparison_shows_progress_then_its_results(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("vic", Role.VIEWER)
    run = stored_run(cluster)  # queued, as a worker would find it
    log_in(page, live_server, "vic")
    page.goto(f"{live_server.url}/what-if/{run.pk}/")
    status = page.locator("#whatif-status")
    assert "Waiting for a worker" in status.inner_text()
    assert page.get_by_role("progressbar", name="Pods placed").count() == 1
    assert page.get_by_role("button", name="Cancel").count() == 0  # a viewer's page
    screenshot(page, "what-if-queued")

    assert whatif.execute(run.pk, "test") == WhatIfStatus.SUCCEEDED
    # The status part polls; once finished the page loads again with the results.
    page.get_by_role("heading", name="Side by side").wait_for()
    assert "succeeded" in status.inner_text()
    assert "0 of 40 pods" in page.locator("#moved").inner_text()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_an_editor_cancels_a_comparison_under_way(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot, viewport: dict[str, int]
) -> None:
    """A comparison runs apart from the request (a worker, or on the embedded default the
    in-process runner): its page shows progress and a Cancel button that stops it."""
    make_user("eve", Role.EDITOR)
    run = stored_run(cluster, status=WhatIfStatus.RUNNING, progress_done=30)  # 30 of 80 placed
    page.set_viewport_size(viewport)
    log_in(page, live_server, "eve")
    page.goto(f"{live_server.url}/what-if/{run.pk}/")
    assert "Placing pods: 30 of 80" in page.locator("#whatif-status").inner_text()
    bar = page.get_by_role("progressbar", name="Pods placed")
    assert bar.get_attribute("value") == "30" and bar.get_attribute("max") == "80"
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"what-if-running-{viewport['width']}")
    page.get_by_role("button", name="Cancel").click()
    page.locator("#whatif-status", has_text="Cancelled").wait_for()
    run.refresh_from_db()
    assert run.status == WhatIfStatus.CANCELLED
    assert page.get_by_role("button", name="Cancel").count() == 0


NO_OVERFLOW = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def test_pods_without_a_profile_show_as_pending_with_the_reason(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")
    page.goto(f"{live_server.url}/what-if/")
    # The snapshot's pending pods ask for profiles kube-scheduler's defaults lack.
    page.get_by_label("The snapshot's pending pods", exact=False).check()
    candidate = page.get_by_role("group", name="Candidate (B)")
    candidate.get_by_label("Source", exact=True).select_option("defaults")
    page.get_by_role("button", name="Run the comparison").click()

    page.wait_for_url("**/what-if/*/")
    run = WhatIfRun.objects.get()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error
    pending = run.result["runs"][1]["pending"]
    assert pending > 0
    note = page.locator("[data-pending-note]")
    assert note.count() == 1
    assert note.inner_text().startswith(f"B: {pending} pods stay pending: no profile for")
    row = page.locator("table.compare").get_by_role("row", name="pods pending", exact=False)
    assert row.inner_text().split("\t")[1:3] == ["0", str(pending)]
    screenshot(page, "what-if-pending-no-profile")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate(NO_OVERFLOW)
    screenshot(page, "what-if-pending-no-profile-phone")


BAD_CANDIDATE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: Most}
"""


def _submit_a_bad_candidate(page: Any, live_server: Any) -> None:
    page.goto(f"{live_server.url}/what-if/")
    candidate = page.get_by_role("group", name="Candidate (B)")
    candidate.get_by_label("Source", exact=True).select_option("custom")
    candidate.get_by_label("YAML", exact=False).fill(BAD_CANDIDATE)
    page.get_by_role("button", name="Run the comparison").click()
    page.wait_for_load_state()


def _in_view(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    height = page.evaluate("() => window.innerHeight")
    return bool(box) and 0 <= box["y"] < height


def test_an_error_is_summarised_at_the_top_focused_and_linked_to_its_field(
    page: Any, live_server: Any, browser: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")
    _submit_a_bad_candidate(page, live_server)
    expect(page).to_have_title("Error: What-if · schedboard")
    summary = page.locator("#error-summary")
    assert summary.get_attribute("role") == "alert"
    assert "1 problem: the comparison was not started" in summary.inner_text()
    assert page.evaluate("() => document.activeElement.id") == "error-summary"
    assert _in_view(page, "#error-summary")
    # The message is on the field at fault too, and the field keeps what was typed.
    candidate = page.get_by_role("group", name="Candidate (B)")
    assert (
        "scoringStrategy.type: supported values" in candidate.locator(".field-errors").inner_text()
    )
    assert page.get_by_role("group", name="Baseline (A)").locator(".field-errors").count() == 0
    screenshot(page, "what-if-error-summary")
    summary.get_by_role("link", name="Candidate (B): YAML").click()
    assert page.evaluate("() => document.activeElement.id") == "id_candidate_yaml"
    assert _in_view(page, "#id_candidate_yaml")
    assert "{type: Most}" in page.locator("#id_candidate_yaml").input_value()
    screenshot(page, "what-if-error-field")
    assert not WhatIfRun.objects.exists()

    # Without JavaScript the page is the same: the summary is focused (autofocus), links work.
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        plain = context.new_page()
        log_in(plain, live_server, "eve")
        _submit_a_bad_candidate(plain, live_server)
        assert plain.evaluate("() => document.activeElement.id") == "error-summary"
        assert _in_view(plain, "#error-summary")
        assert plain.evaluate(NO_OVERFLOW)
        screenshot(plain, "what-if-error-summary-phone-no-js")
        plain.locator("#error-summary a").click()
        assert plain.url.endswith("#id_candidate_yaml")
        assert _in_view(plain, "#id_candidate_yaml")
    finally:
        context.close()


def test_the_run_button_shows_the_comparison_is_under_way(
    page: Any, live_server: Any, cluster: Cluster, screenshot: Shot
) -> None:
    """Without a broker the comparison runs before the page answers, with one it is queued:
    either way the button says the work is under way and cannot be pressed twice. (The submit
    is held back here so the busy state can be looked at, then sent.)"""
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")
    page.goto(f"{live_server.url}/what-if/")
    page.evaluate(
        "document.querySelector('form.whatif').addEventListener('submit', e => e.preventDefault())"
    )
    page.get_by_role("button", name="Run the comparison").click()
    busy = page.locator("form.whatif button.busy")
    busy.wait_for()
    assert busy.is_disabled() and busy.inner_text() == "Starting the comparison…"
    assert page.locator("form.whatif").get_attribute("aria-busy") == "true"
    screenshot(page, "what-if-busy")
    page.evaluate("document.querySelector('form.whatif').submit()")
    page.wait_for_url("**/what-if/*/")
    assert WhatIfRun.objects.get().status == WhatIfStatus.SUCCEEDED


def _derive(page: Any, preset: str, points: str | None = None) -> Any:
    candidate = page.get_by_role("group", name="Candidate (B)")
    candidate.get_by_label("Preset (derived", exact=False).select_option(label=preset)
    if points is not None:
        candidate.get_by_label("percentage points", exact=False).fill(points)
    candidate.get_by_role("button", name="Derive the YAML for Candidate (B)").click()
    page.wait_for_load_state()
    return page.get_by_role("group", name="Candidate (B)")


def test_a_preset_derives_the_candidate_from_the_stored_configuration(
    page: Any, live_server: Any, browser: Any, cluster: Cluster, screenshot: Shot
) -> None:
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")
    page.goto(f"{live_server.url}/what-if/")
    candidate = _derive(page, "NodeResourcesFit MostAllocated (packing)")
    notice = candidate.get_by_role("status")
    assert "the cluster's stored configuration v" in notice.inner_text()
    assert candidate.get_by_label("Source", exact=True).input_value() == "custom"
    assert candidate.get_by_label("Name (optional)").input_value() == "MostAllocated"
    yaml_box = page.locator("#id_candidate_yaml")
    assert "type: MostAllocated" in yaml_box.input_value()
    assert page.evaluate("() => document.activeElement.id") == "id_candidate_yaml"
    assert not WhatIfRun.objects.exists()  # deriving runs nothing
    screenshot(page, "what-if-preset-packing")

    candidate = _derive(page, "LoadAware usage thresholds ± N percentage points", "-10")
    assert (
        "LoadAware usage thresholds -10 percentage points"
        in candidate.get_by_role("status").inner_text()
    )
    assert "usageThresholds" in yaml_box.input_value()
    # The derived YAML and its name can still be edited before running.
    candidate.get_by_label("Name (optional)").fill("thresholds -10")
    screenshot(page, "what-if-preset-loadaware")
    # Enter in a text box runs the comparison (the form's default button), not a preset.
    candidate.get_by_label("Name (optional)").press("Enter")
    page.wait_for_url("**/what-if/*/")
    run = WhatIfRun.objects.get()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error
    assert page.get_by_role("heading", level=1).inner_text().endswith("vs thresholds -10")

    # Server-side: the same without JavaScript, and it fits a phone.
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        plain = context.new_page()
        log_in(plain, live_server, "eve")
        plain.goto(f"{live_server.url}/what-if/")
        _derive(plain, "RequestedToCapacityRatio (shape 0% → 0, 100% → 10: packing)")
        assert "type: RequestedToCapacityRatio" in plain.locator("#id_candidate_yaml").input_value()
        assert plain.evaluate("() => document.activeElement.id") == "id_candidate_yaml"
        assert plain.evaluate(NO_OVERFLOW)
        screenshot(plain, "what-if-preset-phone-no-js")
    finally:
        context.close()
