"""At a phone's width (390 px) no page scrolls sideways: wide tables scroll inside their own box.

The test crawls every page reachable from the dashboard by links (as an operator, on the demo
cluster with its demo policies and a stored decision) and fails on any page whose document is
wider than the viewport, naming the element that sticks out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from policy.clusters.services import load_demo_cluster
from policy.core.choices import DecisionSource, Role
from policy.decisions.services import evaluate_pod
from policy.policies.demo import seed_demo_policies
from tests.personas import create_user as make_user
from tests.ui.session import log_in

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
MAX_PAGES = 80
# Not pages of the dashboard: the admin, the API and its docs, logging out, files.
SKIP = ("/admin", "/api/", "/accounts/logout", "/static/", "/metrics", "/healthz", "/readyz")
WIDEST = """() => {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width) return null;
  let worst = null;
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (box.right > width + 1 && !el.closest('.table-wrap, pre, .scroll-x')) {
      if (!worst || box.right > worst.right) {
        worst = {right: Math.round(box.right), tag: el.tagName.toLowerCase(),
                 cls: el.className.toString().slice(0, 60), id: el.id};
      }
    }
  }
  return {scrollWidth: document.documentElement.scrollWidth, worst};
}"""

BIG_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "batch-7", "namespace": "analytics"},
    "spec": {
        "containers": [{"name": "job", "image": "busybox", "resources": {"requests": {"cpu": "6"}}}]
    },
}


@pytest.fixture
def demo(transactional_db: None) -> Any:
    snapshot = load_demo_cluster(nodes=60)
    seed_demo_policies(snapshot.cluster)
    evaluate_pod(snapshot.cluster, BIG_POD, source=DecisionSource.UI)
    yield snapshot.cluster


def page_links(page: Any, origin: str) -> list[str]:
    hrefs: list[str] = page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
    found = []
    for href in hrefs:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != origin or parts.path.startswith(SKIP):
            continue
        if "page=" in parts.query or "sort=" in parts.query:
            continue  # the same page again
        found.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found


PHONE_SHOTS = {
    "/": "phone-dashboard",
    "/policies/": "phone-policies",
    "/decisions/": "phone-decisions",
    "/policies/configurations/import/": "phone-policy-import",
}


def test_no_page_scrolls_sideways_on_a_phone(
    page: Any, live_server: Any, demo: Any, screenshot: Callable[[Any, str], Any]
) -> None:
    make_user("olga", Role.OPERATOR)
    log_in(page, live_server, "olga")
    page.set_viewport_size(PHONE)
    queue, seen, wide = deque(["/"]), {"/"}, []
    visited = 0
    while queue and visited < MAX_PAGES:
        path = queue.popleft()
        response = page.goto(f"{live_server.url}{path}")
        visited += 1
        if response is None or response.status != 200:
            continue
        shot = PHONE_SHOTS.pop(urlsplit(path).path, None)
        if shot:
            screenshot(page, shot)
        overflow = page.evaluate(WIDEST)
        if overflow:
            wide.append(f"{path}: {overflow}")
        for link in page_links(page, live_server.url):
            if link not in seen:
                seen.add(link)
                queue.append(link)
    assert visited >= 15, f"the crawl reached only {visited} pages: {sorted(seen)}"
    assert not wide, "pages wider than 390 px:\n" + "\n".join(wide)
