"""The profile editor and the document import in a real browser: the target's plugins per
extension point (added with a click), an unknown name's error on its box, the effective
plugins; pasting a whole KubeSchedulerConfiguration, previewing and saving it; both at a
phone's width without sideways scrolling. Screenshots go to ``artifacts/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policy.accounts.changes import ChangeContext
from policy.clusters.services import load_demo_cluster
from policy.policies import services as policies
from policy.policies.models import SchedulerConfiguration, SchedulerProfile
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]

DOCUMENT = """\
apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
parallelism: 8
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: LoadAwareScheduling
  pluginConfig:
  - name: LoadAwareScheduling
    args:
      usageThresholds:
        cpu: 70
- schedulerName: batch
  plugins:
    filter:
      enabled:
      - name: Reservation
"""


@pytest.fixture
def profile(transactional_db: None) -> Iterator[SchedulerProfile]:
    snapshot = load_demo_cluster(nodes=20)
    cluster = snapshot.cluster
    cluster.scheduler_flavor, cluster.scheduler_version = "koord-scheduler", "1.7"
    cluster.save()
    ctx = ChangeContext.system()
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, ctx)
    yield policies.ProfileService().create(
        {
            "configuration": configuration,
            "scheduler_name": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
        },
        ctx,
    )


def test_profile_editor_lists_the_targets_plugins_and_errors_on_the_box(
    page: Any, live_server: Any, profile: SchedulerProfile, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.goto(f"{live_server.url}/policies/profiles/{profile.pk}/edit/")
    assert page.title() == "Edit profile default-scheduler · schedboard"
    assert "Checked against koord-scheduler@1.7" in page.inner_text("main")
    # The effective plugins: defaults and multiPoint expanded.
    effective = page.get_by_role("table", name="Effective plugins")
    score_row = effective.get_by_role("row").filter(has_text="LoadAwareScheduling").first
    assert "NodeResourcesFit" in score_row.inner_text()
    screenshot(page, "profile-editor")
    # The plugins koord-scheduler 1.7 registers at score, one added with a click.
    row = page.locator("#point-score")
    row.get_by_text(re.compile(r"^\d+ registered$")).click()
    plugins = row.get_by_role("list", name="Plugins koord-scheduler@1.7 registers for score")
    assert plugins.is_visible()
    assert (
        "not modelled"
        in plugins.get_by_role("listitem").filter(has_text="Reservation").inner_text()
    )
    plugins.get_by_role(
        "button", name="Add NodeResourcesBalancedAllocation to score enabled"
    ).click()
    box = page.get_by_label("score enabled", exact=True)
    assert box.input_value() == "NodeResourcesBalancedAllocation"
    screenshot(page, "profile-editor-registered-plugins")
    # An unknown name: the error is on its box, naming the plugin, the target and the line.
    page.get_by_label("filter enabled", exact=True).fill("NodePorts\nNoSuchPlugin")
    page.get_by_role("button", name="Save").click()
    page.locator("#error-summary").wait_for()
    assert page.title().startswith("Error: ")
    errors = page.locator("#id_plugins_filter_enabled_errors")
    assert errors.inner_text().startswith(
        "Line 2: NoSuchPlugin: koord-scheduler@1.7 registers no plugin of that name"
    )
    assert page.get_by_label("filter enabled", exact=True).get_attribute("aria-invalid") == "true"
    summary = page.get_by_role("alert").filter(has_text="nothing was saved")
    summary.get_by_role("link", name="filter enabled").click()
    assert page.evaluate("document.activeElement.id") == "id_plugins_filter_enabled"
    assert box.input_value() == "NodeResourcesBalancedAllocation"  # input kept
    screenshot(page, "profile-editor-unknown-plugin")
    # Fixed: the preview's effective table follows the input.
    page.get_by_label("filter enabled", exact=True).fill("NodePorts")
    page.get_by_label("score disabled", exact=True).fill("ImageLocality")
    page.get_by_role("button", name="Preview").click()
    page.locator("#preview").wait_for()
    score = effective.get_by_role("row").filter(
        has=page.get_by_role("rowheader", name="score", exact=True)
    )
    assert "ImageLocality" not in score.inner_text()
    assert "listed here" in score.inner_text()
    screenshot(page, "profile-editor-preview")
    profile.refresh_from_db()
    assert profile.version == 1


def test_new_profile_title(page: Any, live_server: Any, profile: SchedulerProfile) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.goto(f"{live_server.url}/policies/")
    page.get_by_role("link", name="Add profile").click()
    page.wait_for_url(re.compile(r"/policies/profiles/new/"))
    assert page.title() == "New profile in scheduler configuration of cluster demo · schedboard"
    assert page.get_by_role("heading", level=1).inner_text() == (
        "New profile in scheduler configuration of cluster demo"
    )


def test_import_a_document_previews_and_saves(
    page: Any, live_server: Any, profile: SchedulerProfile, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    configuration = profile.configuration
    page.goto(f"{live_server.url}/policies/configurations/{configuration.pk}/")
    page.get_by_role("link", name="Import a document").click()
    page.wait_for_url(re.compile(r"/policies/configurations/import/"))
    assert page.title() == "Import a KubeSchedulerConfiguration into cluster demo · schedboard"
    box = page.get_by_label("KubeSchedulerConfiguration (YAML or JSON)")
    # A typo first: the error names the line and the field; the text stays.
    bad = DOCUMENT.replace("parallelism: 8", "parallelism: eight")
    box.fill(bad)
    page.get_by_role("button", name="Preview").click()
    alert = page.get_by_role("alert").filter(has_text="nothing was saved")
    assert "line 3, parallelism" in alert.inner_text()
    assert box.input_value() == bad
    screenshot(page, "import-document-error")
    box.fill(DOCUMENT)
    page.get_by_role("button", name="Preview").click()
    plan = page.get_by_role("table", name="Profiles")
    assert (
        "replaces v1" in plan.get_by_role("row").filter(has_text="default-scheduler").inner_text()
    )
    assert "new profile" in plan.get_by_role("row").filter(has_text="batch").inner_text()
    assert "deleted" not in plan.inner_text()
    kept = page.locator("ul.kept").inner_text()
    assert "v1beta3" in kept and "Reservation" in kept
    assert "parallelism: 8" in page.locator("#preview").inner_text()
    screenshot(page, "import-document-preview")
    assert SchedulerConfiguration.objects.get().parallelism is None
    page.get_by_role("button", name="Import and save").click()
    page.wait_for_url(f"{live_server.url}/policies/configurations/{configuration.pk}/")
    assert "Replaced the scheduler configuration of cluster demo" in page.inner_text("main")
    screenshot(page, "import-document-saved")
    assert SchedulerConfiguration.objects.get().parallelism == 8


def test_profile_editor_and_import_fit_a_phone(
    page: Any, live_server: Any, profile: SchedulerProfile, screenshot: Shot
) -> None:
    make_user("eddie", "editor")
    log_in(page, live_server, "eddie")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/policies/profiles/{profile.pk}/edit/")
    page.locator("#point-multiPoint details.registered summary").click()
    page.get_by_label("filter enabled", exact=True).fill("NoSuchPluginWithAVeryLongNameIndeed")
    page.get_by_role("button", name="Save").click()
    page.locator("#error-summary").wait_for()
    assert page.title().startswith("Error: ")
    assert page.evaluate(WIDEST) is None
    screenshot(page, "phone-profile-editor")
    page.goto(
        f"{live_server.url}/policies/configurations/import/?cluster={profile.configuration.cluster_id}"
    )
    page.get_by_label("KubeSchedulerConfiguration (YAML or JSON)").fill(DOCUMENT)
    page.get_by_role("button", name="Preview").click()
    page.get_by_role("button", name="Import and save").wait_for()
    assert page.evaluate(WIDEST) is None
    screenshot(page, "phone-import-document")
