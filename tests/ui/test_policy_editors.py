"""The policy editors in a real browser: an editor fixes an invalid LoadAware threshold after
reading the inline error, previews the diff and saves; the history shows the new version; a
viewer sees no edit control. Screenshots go to ``artifacts/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from policy.accounts.changes import ChangeContext, history
from policy.clusters.models import Cluster
from policy.clusters.services import load_demo_cluster
from policy.policies import services as policies
from policy.policies.models import LoadAwareSchedulingArgs, NodeThresholdPolicy
from tests.personas import create_user as make_user
from tests.policy_trees import loadaware_args
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def loadaware(transactional_db: None) -> Iterator[LoadAwareSchedulingArgs]:
    """The demo cluster with a LoadAware profile and args, made through the services."""
    snapshot = load_demo_cluster(nodes=30)
    ctx = ChangeContext.system()
    args = loadaware_args(snapshot.cluster)
    policies.NodeThresholdPolicyService().create(
        {
            "cluster": snapshot.cluster,
            "name": "night-batch",
            "node_selector": {},
            "usage_thresholds": {"cpu": 80},
            "active_from": "22:00",
            "active_until": "06:00",
        },
        ctx,
    )
    yield args


def test_editor_fixes_an_invalid_threshold_previews_and_saves(
    page: Any, live_server: Any, loadaware: LoadAwareSchedulingArgs, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Policies").click()
    page.wait_for_url(re.compile(r"/policies/"))
    assert page.title() == "Policies of demo · schedboard"
    screenshot(page, "policies-index")
    page.get_by_role("link", name="Edit LoadAware args of default-scheduler").click()
    page.wait_for_url(re.compile(r"/policies/loadaware/\d+/edit/$"))
    assert page.title().startswith("Edit LoadAware args")
    thresholds = page.get_by_role("group", name="Usage thresholds (usageThresholds)")
    percent = thresholds.get_by_label("Percent, row 1")
    assert thresholds.get_by_label("Resource, row 1").input_value() == "cpu"
    assert percent.input_value() == "45"
    percent.fill("150")
    page.get_by_role("button", name="Save").click()
    # The error summary links to the field; the cpu row says which rule it broke.
    summary = page.get_by_role("alert").filter(has_text="nothing was saved")
    assert summary.is_visible()
    rule = "resource Threshold of cpu should be less than 100, got 150"
    assert rule in summary.inner_text()
    assert "Usage thresholds (usageThresholds)" in summary.inner_text()
    assert page.title().startswith("Error: ")
    percent = page.get_by_role("group", name="Usage thresholds (usageThresholds)").get_by_label(
        "Percent, row 1"
    )
    assert percent.get_attribute("aria-invalid") == "true"
    assert page.locator("#id_usage_thresholds_0_errors").inner_text().strip() == rule
    assert percent.get_attribute("aria-describedby") == "id_usage_thresholds_0_errors"
    summary.get_by_role("link").first.click()
    assert page.evaluate("document.activeElement.id") == "id_usage_thresholds_0_value"
    screenshot(page, "policy-editor-loadaware-error")
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 45, "memory": 90}

    percent.fill("70")
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#preview")
    assert preview.is_visible()
    assert preview.locator(".d-del").filter(has_text="cpu: 45").count() == 1
    assert preview.locator(".d-add").filter(has_text="cpu: 70").count() == 1
    screenshot(page, "policy-editor-loadaware-preview")
    assert LoadAwareSchedulingArgs.objects.get().version == 1  # a preview saves nothing

    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("Saved LoadAware args").wait_for()
    assert page.url == f"{live_server.url}/policies/loadaware/{loadaware.pk}/"
    assert "Saved LoadAware args of profile default-scheduler as version 2." in page.inner_text(
        "main"
    )
    screenshot(page, "policy-detail-loadaware")
    args = LoadAwareSchedulingArgs.objects.get()
    assert args.version == 2 and args.usage_thresholds == {"cpu": 70, "memory": 90}
    change = history(args).first()
    assert change is not None and change.action == "update" and change.user_name == "eddie"

    page.get_by_role("link", name="History").click()
    expect(page).to_have_title(
        "History of LoadAware args of profile default-scheduler · schedboard"
    )
    assert page.get_by_role("heading", name=re.compile(r"^v2 · Updated by eddie")).is_visible()
    assert page.get_by_role("button", name="Revert to v1").is_visible()
    screenshot(page, "policy-history-loadaware")


def test_threshold_policy_page_shows_the_nodes_it_hits(
    page: Any, live_server: Any, loadaware: LoadAwareSchedulingArgs, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.goto(f"{live_server.url}/policies/")
    page.get_by_role("link", name="night-batch").click()
    page.wait_for_url(re.compile(r"/policies/[a-z-]+/\d+/$"))
    assert page.title() == "Node threshold policy night-batch · schedboard"
    assert "30 nodes of the newest snapshot" in page.inner_text("main")
    screenshot(page, "policy-detail-threshold")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.get_by_label("Priority").fill("5")
    page.get_by_role("button", name="Preview").click()
    assert "Targets 30 nodes" in page.locator("#preview").inner_text()
    screenshot(page, "policy-editor-threshold-preview")
    cluster = Cluster.objects.get()
    page.goto(
        f"{live_server.url}/policies/profiles/{cluster.scheduler_configuration.profiles.get().pk}/edit/"
    )
    screenshot(page, "policy-editor-profile")


def test_viewer_sees_no_edit_controls(
    page: Any, live_server: Any, loadaware: LoadAwareSchedulingArgs, screenshot: Shot
) -> None:
    make_user("vera", "viewer")
    log_in(page, live_server, "vera")
    for path in ("/policies/", f"/policies/loadaware/{loadaware.pk}/"):
        page.goto(f"{live_server.url}{path}")
        main = page.locator("main")
        assert (
            main.get_by_role("link", name=re.compile(r"^(Edit|Add|New|Create|Delete)")).count() == 0
        )
        assert main.get_by_role("button").count() == 0
    assert page.get_by_role("link", name="History").is_visible()
    screenshot(page, "policy-detail-loadaware-viewer")
    page.goto(f"{live_server.url}/policies/loadaware/{loadaware.pk}/history/")
    assert page.get_by_role("button", name=re.compile("^Revert")).count() == 0
    response = page.goto(f"{live_server.url}/policies/loadaware/{loadaware.pk}/edit/")
    assert response is not None and response.status == 403


def test_threshold_rows_are_filled_with_the_picker_and_a_typo_is_warned_about(
    page: Any, live_server: Any, loadaware: LoadAwareSchedulingArgs, screenshot: Shot
) -> None:
    """An editor builds a threshold map from the known resources, adds a row by hand with a
    typo, removes a row, and is warned (not refused) that no node reports the typo."""
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    cluster = Cluster.objects.get()
    page.goto(f"{live_server.url}/policies/thresholds/new/?parent={cluster.pk}")
    page.get_by_label("Name", exact=True).fill("hot-nodes")
    page.get_by_label("Node selector (YAML)").fill("{}")
    group = page.get_by_role("group", name="Usage thresholds", exact=True)
    pick = group.get_by_label("Add a resource to Usage thresholds")
    assert pick.is_visible()  # the script shows the picker and the row buttons
    assert group.get_by_role("button", name="Remove row 1").is_visible()
    known = pick.locator("option").all_inner_texts()
    assert known[:4] == ["Add a resource…", "cpu", "memory", "ephemeral-storage"]

    pick.select_option("memory")  # into the first empty row; its percent box is next
    assert group.get_by_label("Resource, row 1").input_value() == "memory"
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Percent, row 1"
    page.keyboard.type("90")
    assert pick.locator("option[value=memory]").is_disabled()  # already a row
    pick.select_option("ephemeral-storage")
    group.get_by_label("Percent, row 2").fill("80")
    group.get_by_role("button", name="Add row").click()
    group.get_by_role("button", name="Add row").click()
    assert group.locator(".resource-row").count() == 4
    group.get_by_label("Resource, row 3").fill("cpuu")
    group.get_by_label("Percent, row 3").fill("70")
    group.get_by_role("button", name="Remove row 2").click()  # ephemeral-storage goes
    assert group.locator(".resource-row").count() == 3
    assert group.get_by_label("Resource, row 2").input_value() == "cpuu"
    screenshot(page, "policy-editor-threshold-rows")

    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#preview")
    warning = (
        "Usage thresholds: no node of the newest snapshot reports 'cpuu' (a typo?), so this "
        "entry is never used. A non-empty map replaces the LoadAware args' map: with no cpu "
        "entry here, the cpu check would be off."
    )
    assert warning in preview.inner_text()
    group = page.get_by_role("group", name="Usage thresholds", exact=True)
    row_warning = page.locator("#id_usage_thresholds_1_warnings")
    assert row_warning.inner_text().strip() == warning
    assert group.get_by_label("Resource, row 2").input_value() == "cpuu"
    assert group.get_by_label("Resource, row 2").get_attribute("aria-describedby") == (
        "id_usage_thresholds_1_warnings"
    )
    screenshot(page, "policy-editor-threshold-typo-warning")
    assert not NodeThresholdPolicy.objects.filter(name="hot-nodes").exists()

    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("Saved node threshold policy hot-nodes").wait_for()
    assert warning in page.locator(".messages").inner_text()
    screenshot(page, "policy-detail-threshold-typo-warning")
    saved = NodeThresholdPolicy.objects.get(name="hot-nodes")
    assert saved.usage_thresholds == {"memory": 90, "cpuu": 70}

    # On a phone the rows fit: nothing scrolls sideways.
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/policies/thresholds/{saved.pk}/edit/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "phone-policy-editor-threshold-rows")
    page.goto(f"{live_server.url}/policies/loadaware/{loadaware.pk}/edit/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "phone-policy-editor-loadaware-rows")


def test_rows_work_without_javascript(
    browser: Any, live_server: Any, loadaware: LoadAwareSchedulingArgs, screenshot: Shot
) -> None:
    """Without the script: blank rows to fill (more after each preview), a cleared row is no
    entry, and the add and remove buttons, which would do nothing, are not shown."""
    make_user("eddie", "editor")
    context = browser.new_context(
        viewport={"width": 1366, "height": 850}, java_script_enabled=False
    )
    page = context.new_page()
    try:
        log_in(page, live_server, "eddie")
        page.goto(f"{live_server.url}/policies/loadaware/{loadaware.pk}/edit/")
        group = page.get_by_role("group", name="Usage thresholds (usageThresholds)")
        assert group.locator(".resource-row").count() == 4  # cpu, memory, two blank
        assert not group.get_by_role("button", name="Add row").is_visible()
        assert not group.get_by_role("button", name="Remove row 1").is_visible()
        group.get_by_label("Resource, row 1").fill("")
        group.get_by_label("Percent, row 1").fill("")  # cpu removed
        group.get_by_label("Resource, row 3").fill("ephemeral-storage")
        group.get_by_label("Percent, row 3").fill("85")
        with page.expect_navigation():  # without the script the preview is a new page
            page.get_by_role("button", name="Preview").click()
        group = page.get_by_role("group", name="Usage thresholds (usageThresholds)")
        assert group.locator(".resource-row").count() == 4  # memory, ephemeral-storage, 2 blank
        assert group.get_by_label("Resource, row 2").input_value() == "ephemeral-storage"
        screenshot(page, "policy-editor-loadaware-rows-no-js")
        page.get_by_role("button", name="Save", exact=True).click()
        page.get_by_text("Saved LoadAware args").wait_for()
        args = LoadAwareSchedulingArgs.objects.get()
        assert args.usage_thresholds == {"memory": 90, "ephemeral-storage": 85}
    finally:
        context.close()


def test_two_editors_change_the_same_args(
    page: Any,
    browser: Any,
    live_server: Any,
    loadaware: LoadAwareSchedulingArgs,
    screenshot: Shot,
) -> None:
    """Eddie and Erin edit the same LoadAware args at once: Erin saves first. Eddie's Preview
    shows her change merged into his form (different fields) and it stays until he saves both;
    when both change the thresholds, Eddie sees the two values side by side and must choose."""
    make_user("eddie", "editor")
    make_user("erin", "editor")
    log_in(page, live_server, "eddie")
    other = browser.new_context(viewport={"width": 1366, "height": 850})
    erin = other.new_page()
    try:
        log_in(erin, live_server, "erin")
        edit_url = f"{live_server.url}/policies/loadaware/{loadaware.pk}/edit/"
        weight = re.compile(r"^Dominant resource weight")

        def cpu_percent(on: Any) -> Any:
            rows = on.get_by_role("group", name="Usage thresholds (usageThresholds)", exact=True)
            assert rows.get_by_label("Resource, row 1").input_value() == "cpu"
            return rows.get_by_label("Percent, row 1")

        # Different fields: merged, confirmed, both saved.
        page.goto(edit_url)
        erin.goto(edit_url)
        erin.get_by_label(weight).fill("7")
        erin.get_by_role("button", name="Save").click()
        erin.get_by_text("Saved LoadAware args").wait_for()
        cpu_percent(page).fill("60")
        page.get_by_role("button", name="Preview").click()
        notice = page.locator("#conflict")
        assert notice.is_visible() and "by erin" in notice.inner_text()
        rows = notice.locator("table.merge-summary tbody tr")
        assert rows.filter(has_text="their change").filter(has_text="7").count() == 1
        assert rows.filter(has_text="your input").filter(has_text="cpu: 60").count() == 1
        assert page.get_by_label(weight).input_value() == "7"
        assert cpu_percent(page).input_value() == "60"
        screenshot(page, "policy-merge-different-fields")
        assert LoadAwareSchedulingArgs.objects.get().version == 2
        page.get_by_role("button", name="Preview").click()
        assert page.locator("#preview").is_visible()
        assert page.locator("#conflict").is_visible()  # the notice stays until saved
        screenshot(page, "policy-merge-preview")
        page.get_by_role("button", name="Save merged version").click()
        page.get_by_text("Saved LoadAware args").wait_for()
        args = LoadAwareSchedulingArgs.objects.get()
        assert args.version == 3 and args.dominant_resource_weight == 7
        assert args.usage_thresholds == {"cpu": 60, "memory": 90}

        # The same field: both values side by side, a choice is needed.
        page.goto(edit_url)
        erin.goto(edit_url)
        cpu_percent(erin).fill("50")
        erin.get_by_role("button", name="Save").click()
        erin.get_by_text("Saved LoadAware args").wait_for()
        cpu_percent(page).fill("65")
        page.get_by_role("button", name="Save").click()
        choices = page.locator("#merge-choices")
        assert choices.is_visible()
        assert "cpu: 50" in choices.inner_text() and "cpu: 65" in choices.inner_text()
        screenshot(page, "policy-merge-same-field")
        page.get_by_role("button", name="Save merged version").click()
        assert page.locator("#merge-choices").is_visible()  # not chosen: nothing saved
        assert LoadAwareSchedulingArgs.objects.get().version == 4
        page.get_by_role("radio", name=re.compile(r"^Yours")).check()
        page.get_by_role("button", name="Save merged version").click()
        page.get_by_text("Saved LoadAware args").wait_for()
        args = LoadAwareSchedulingArgs.objects.get()
        assert args.version == 5 and args.usage_thresholds == {"cpu": 65, "memory": 90}
    finally:
        other.close()
