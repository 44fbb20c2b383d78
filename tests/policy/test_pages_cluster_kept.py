"""Every page keeps the cluster one is looking at: the menu, the dashboard's "Edit policies"
and pages reached without ``?cluster=`` never switch to another cluster's policies."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import Cluster
from policy.clusters.services import load_demo_cluster

pytestmark = pytest.mark.django_db

MENU = ("Dashboard", "Evaluate", "Decisions", "Policies", "What-if", "Sync")


@pytest.fixture
def second(editor: User) -> Cluster:
    """Two clusters; the second is neither the demo one nor the first by name."""
    load_demo_cluster(name="alpha", nodes=3)
    return load_demo_cluster(name="zulu", nodes=3).cluster


def menu_links(html: str) -> dict[str, str]:
    nav = html[html.index("<nav") : html.index("</nav>")]
    anchors = re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', nav)
    links = {label: href for href, label in anchors}
    return {label: links[label].replace("&amp;", "&") for label in MENU}


def cluster_of(response: Any) -> Cluster | None:
    for context in response.context or []:
        if "cluster" in context:
            found = context["cluster"]
            return found if isinstance(found, Cluster) else None
    return None


def test_every_menu_link_keeps_the_cluster(client: Client, editor: User, second: Cluster) -> None:
    client.force_login(editor)
    page = client.get(f"/?cluster={second.pk}")
    assert cluster_of(page) == second
    for label, href in menu_links(page.content.decode()).items():
        response = client.get(href, follow=True)
        assert response.status_code == 200, (label, href)
        assert cluster_of(response) == second, (label, href)


def test_edit_policies_opens_this_clusters_policies(
    client: Client, editor: User, second: Cluster
) -> None:
    client.force_login(editor)
    page = client.get(f"/?cluster={second.pk}")
    [href] = [url for label, url in page.context["edit_links"] if label == "policies"]
    assert cluster_of(client.get(href)) == second


def test_a_page_without_the_parameter_stays_on_the_chosen_cluster(
    client: Client, editor: User, second: Cluster
) -> None:
    client.force_login(editor)
    client.get(f"/policies/?cluster={second.pk}")
    for page in ("/", "/policies/", "/evaluate/", "/what-if/", "/sync/"):
        response = client.get(page, follow=True)
        assert cluster_of(response) == second, page
