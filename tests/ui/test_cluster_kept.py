"""In a real browser, from a cluster that is neither the first nor the demo one: every link of
the menu keeps it, and logging out and in again lands on it. Screenshots go to
``artifacts/screenshots/``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from policy.clusters.models import Cluster
from policy.clusters.services import load_demo_cluster
from policy.core.choices import Role
from tests.personas import PASSWORD
from tests.personas import create_user as make_user
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)

MENU = ("Dashboard", "Evaluate", "Decisions", "Policies", "What-if", "Sync")


@pytest.fixture
def zulu(transactional_db: None) -> Iterator[Cluster]:
    """Three demo clusters; ``zulu`` is last by name, so never the one shown by default."""
    load_demo_cluster(nodes=4)
    load_demo_cluster(name="alpha", nodes=3)
    cluster = load_demo_cluster(name="zulu", nodes=3).cluster
    yield cluster


def menu_link(page: Any, label: str) -> Any:
    return page.locator("header nav").get_by_role("link", name=label, exact=True)


def shows(page: Any, cluster: Cluster) -> bool:
    """Every section of the menu links to the cluster's pages, and the page names it."""
    hrefs = [menu_link(page, label).get_attribute("href") or "" for label in MENU]
    return all(href.endswith(f"?cluster={cluster.pk}") for href in hrefs) and (
        cluster.name in page.locator("main").inner_text()
    )


def test_every_menu_link_keeps_the_cluster_and_login_returns_to_it(
    page: Any, live_server: Any, zulu: Cluster, screenshot: Callable[[Any, str], Any]
) -> None:
    make_user("olga", Role.OPERATOR)
    log_in(page, live_server, "olga")
    page.goto(f"{live_server.url}/?cluster={zulu.pk}")
    assert shows(page, zulu)
    for label in MENU:
        menu_link(page, label).click()
        page.wait_for_load_state()
        assert shows(page, zulu), (label, page.url)
        screenshot(page, f"cluster-kept-{label.lower()}")

    page.get_by_role("button", name="Log out").click()
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    assert shows(page, zulu), "logging in again lands on the cluster last chosen"
    screenshot(page, "cluster-kept-after-login")
