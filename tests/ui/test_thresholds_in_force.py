"""A node carrying someone else's usage-threshold annotation, in a real browser at a laptop's
and a phone's width: the node page, the policy page, the dashboard and the dry-run all say
its own annotation governs and a push leaves it alone, and none scrolls sideways."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.services import load_demo_cluster
from policy.core.choices import Role
from policy.policies.models import NodeThresholdPolicy
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]


@pytest.fixture
def pool(transactional_db: None) -> tuple[NodeThresholdPolicy, str]:
    """memory-pool targets a node whose annotation someone else set, and a plain one."""
    snapshot = load_demo_cluster(nodes=24)
    nodes = [obj for obj in snapshot.objects if obj["kind"] == "Node"]
    annotated = sorted(
        n["metadata"]["name"] for n in nodes if KEY in (n["metadata"].get("annotations") or {})
    )
    plain = sorted(
        n["metadata"]["name"] for n in nodes if KEY not in (n["metadata"].get("annotations") or {})
    )
    assert annotated and plain
    policy = NodeThresholdPolicy.objects.create(
        cluster=snapshot.cluster,
        name="memory-pool",
        node_names=[annotated[0], plain[0]],
        usage_thresholds={"cpu": 80, "memory": 85},
    )
    return policy, annotated[0]


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_a_foreign_annotation_reads_the_same_everywhere(
    page: Any,
    live_server: Any,
    screenshot: Shot,
    pool: tuple[NodeThresholdPolicy, str],
    viewport: dict[str, int],
) -> None:
    policy, node = pool
    cluster = policy.cluster
    page.set_viewport_size(viewport)
    make_user("otto", Role.OPERATOR)
    log_in(page, live_server, "otto")
    width = viewport["width"]

    page.goto(f"{live_server.url}/clusters/{cluster.pk}/nodes/{node}/")
    facts = page.locator("dl.in-force")
    assert facts.get_attribute("data-in-force") == "leave"
    text = facts.inner_text()
    assert "an annotation set outside schedboard" in text
    assert re.search(r"would write\s+\{.*\"cpu\":80.*\}\s+from memory-pool", text), text
    assert "a push leaves it alone" in text and "left alone" in text
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"in-force-node-{width}")

    page.goto(f"{live_server.url}/policies/thresholds/{policy.pk}/")
    row = page.locator("#detail-annotations tr[data-action='leave']")
    assert node in row.inner_text() and "someone else" in row.inner_text()
    assert "set outside schedboard" in row.inner_text()
    written = page.locator("#detail-annotations tr[data-action='write']")
    assert "memory-pool" in written.inner_text() and "after a push" in written.inner_text()
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"in-force-policy-{width}")

    page.goto(f"{live_server.url}/?cluster={cluster.pk}&q={node}")
    line = page.locator("table.nodes tbody tr", has_text=node)
    assert "set outside schedboard" in line.inner_text()
    assert page.evaluate(WIDEST) is None

    page.goto(f"{live_server.url}/clusters/{cluster.pk}/sync/")
    page.get_by_role("button", name="Push to cluster…").click()
    page.wait_for_url(re.compile(r"/sync/plan/\d+/$"))
    notes = page.locator("section", has=page.get_by_role("heading", name="Notes"))
    assert f"node {node}: {KEY} was set by someone else; left alone" in notes.inner_text()
    assert node not in page.locator("main table").first.inner_text()
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"in-force-dry-run-{width}")
