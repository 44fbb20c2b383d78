"""An import that deletes profiles, in a real browser at a laptop's and a phone's width: the
preview lists each deletion with a box to tick, saving without every tick is refused, and the
deleted profile's history stays readable afterwards."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.accounts.changes import ChangeContext
from policy.clusters.services import load_demo_cluster
from policy.core.choices import Role
from policy.policies import services as policies
from policy.policies.models import SchedulerConfiguration, SchedulerProfile
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]
SYSTEM = ChangeContext.system()
DOCUMENT = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


@pytest.fixture
def configuration(transactional_db: None) -> SchedulerConfiguration:
    cluster = load_demo_cluster(nodes=12).cluster
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    for position, name in enumerate(("default-scheduler", "batch-scheduler")):
        policies.ProfileService().create(
            {"configuration": configuration, "scheduler_name": name, "position": position},
            SYSTEM,
        )
    batch = SchedulerProfile.objects.get(scheduler_name="batch-scheduler")
    policies.LoadAwareArgsService().create({"profile": batch}, SYSTEM)
    configuration.refresh_from_db()
    return configuration


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_deleting_a_profile_is_confirmed_item_by_item(
    page: Any,
    live_server: Any,
    screenshot: Shot,
    configuration: SchedulerConfiguration,
    viewport: dict[str, int],
) -> None:
    page.set_viewport_size(viewport)
    make_user("eddie", Role.EDITOR)
    log_in(page, live_server, "eddie")
    batch = SchedulerProfile.objects.get(scheduler_name="batch-scheduler")
    page.goto(f"{live_server.url}/policies/configurations/{configuration.pk}/")
    page.get_by_role("link", name="Import a document").click()
    page.wait_for_url(re.compile(r"/policies/configurations/import/"))
    page.get_by_label("KubeSchedulerConfiguration (YAML or JSON)").fill(DOCUMENT)
    page.get_by_role("button", name="Preview").click()

    confirm = page.locator("#confirm-deletes")
    assert "This import deletes 1 profile" in confirm.inner_text()
    tick = confirm.get_by_label(re.compile(r"Delete profile batch-scheduler \(version \d+\)"))
    assert "LoadAware args" in confirm.inner_text()
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"import-deletes-{viewport['width']}")

    save = page.get_by_role("button", name="Import, deleting 1 profile")
    save.click()  # not ticked: refused
    alert = page.get_by_role("alert").filter(has_text="nothing was saved")
    assert "tick each one to confirm deleting it (not ticked: batch-scheduler)" in (
        alert.inner_text()
    )
    assert SchedulerProfile.objects.filter(pk=batch.pk).exists()

    tick.check()
    page.get_by_role("button", name="Import, deleting 1 profile").click()
    page.wait_for_url(f"{live_server.url}/policies/configurations/{configuration.pk}/")
    assert not SchedulerProfile.objects.filter(pk=batch.pk).exists()

    # The deleted profile's page leads to its history, which still reads.
    page.goto(f"{live_server.url}/policies/profiles/{batch.pk}/")
    page.wait_for_url(f"{live_server.url}/policies/profiles/{batch.pk}/history/")
    assert "deleted" in page.locator("h1").inner_text()
    notice = page.locator("#deleted-notice").inner_text()
    assert "Deleted" in notice and "by eddie" in notice
    assert page.get_by_role("button", name=re.compile("Revert")).count() == 0
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"import-deleted-history-{viewport['width']}")
