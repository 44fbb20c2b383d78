"""The policy editors in a real browser: an editor fixes an invalid LoadAware threshold after
reading the inline error, previews the diff and saves; the history shows the new version; a
viewer sees no edit control. Screenshots go to ``artifacts/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policy.accounts.changes import ChangeContext, history
from policy.clusters.engine import clear_caches as clear_engine_caches
from policy.clusters.models import Cluster
from policy.clusters.services import load_demo_cluster
from policy.policies import services as policies
from policy.policies.models import LoadAwareSchedulingArgs
from policy.web.pages import clear_caches as clear_page_caches
from tests.personas import create_user as make_user
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]


@pytest.fixture
def loadaware(transactional_db: None) -> Iterator[LoadAwareSchedulingArgs]:
    """The demo cluster with a LoadAware profile and args, made through the services."""
    clear_engine_caches()
    clear_page_caches()
    snapshot = load_demo_cluster(nodes=30)
    ctx = ChangeContext.system()
    configuration = policies.SchedulerConfigurationService().create(
        {"cluster": snapshot.cluster}, ctx
    )
    profile = policies.ProfileService().create(
        {
            "configuration": configuration,
            "scheduler_name": "",
            "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
        },
        ctx,
    )
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
    yield policies.LoadAwareArgsService().create(
        {"profile": profile, "usage_thresholds": {"cpu": 45, "memory": 90}}, ctx
    )
    clear_engine_caches()
    clear_page_caches()


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
    assert page.title().startswith("Edit LoadAware args")
    field = page.get_by_label("Usage thresholds (usageThresholds)")
    field.fill("cpu: 150\nmemory: 90")
    page.get_by_role("button", name="Save").click()
    # The error summary links to the field; the field says which rule it broke.
    summary = page.get_by_role("alert").filter(has_text="nothing was saved")
    assert summary.is_visible()
    rule = "resource Threshold of cpu should be less than 100, got 150"
    assert rule in summary.inner_text()
    assert "Usage thresholds (usageThresholds)" in summary.inner_text()
    assert page.title().startswith("Error: ")
    assert field.get_attribute("aria-invalid") == "true"
    assert page.locator("#id_usage_thresholds_errors").inner_text().strip() == rule
    summary.get_by_role("link").first.click()
    assert page.evaluate("document.activeElement.id") == "id_usage_thresholds"
    screenshot(page, "policy-editor-loadaware-error")
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 45, "memory": 90}

    field.fill("cpu: 70\nmemory: 90")
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
    assert page.title() == "History of LoadAware args of profile default-scheduler · schedboard"
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
