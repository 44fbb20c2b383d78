"""The smaller things a new admin trips over, in a real browser at a laptop's and a phone's
width: the dashboard names the configuration version in force; a cordoned node does not read
as passing and its headline shows cpu and memory; evaluate takes a Deployment and says where
bad YAML is; the LoadAware editor states each default once; the profile editor has a whole-
profile YAML mode and asks "Did you mean ...?" about a misspelt plugin."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.services import load_demo_cluster
from policy.core.choices import Role
from policy.policies.demo import seed_demo_policies
from policy.policies.models import LoadAwareSchedulingArgs, SchedulerConfiguration
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx
          resources: {requests: {cpu: 500m, memory: 256Mi}}
"""


@pytest.fixture
def cluster(transactional_db: None) -> Any:
    snapshot = load_demo_cluster(nodes=24)
    seed_demo_policies(snapshot.cluster)
    return snapshot


def cordoned_node(snapshot: Any) -> str:
    return next(
        o["metadata"]["name"]
        for o in snapshot.objects
        if o["kind"] == "Node" and (o.get("spec") or {}).get("unschedulable")
    )


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_the_smaller_things(
    page: Any, live_server: Any, screenshot: Shot, cluster: Any, viewport: dict[str, int]
) -> None:
    width = viewport["width"]
    page.set_viewport_size(viewport)
    make_user("eve", Role.EDITOR)
    log_in(page, live_server, "eve")
    configuration = SchedulerConfiguration.objects.get(cluster=cluster.cluster)

    # The dashboard names the configuration and the version in force.
    named = f"scheduler configuration #{configuration.pk} v{configuration.version}"
    assert named in page.inner_text("main")

    # A cordoned node: no green "passes", and a headline with cpu and memory.
    node = cordoned_node(cluster)
    page.goto(f"{live_server.url}/clusters/{cluster.cluster_id}/nodes/{node}/")
    text = page.inner_text("main")
    assert "no new pods: NodeUnschedulable refuses them" in text
    assert "LoadAware passes" not in text
    headline = page.locator("p.summary-line").first.inner_text()
    assert re.search(r"cpu \d+%.*memory \d+%", headline), headline
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"smaller-cordoned-{width}")

    # Evaluate a Deployment: its first pod is placed; bad YAML says where, in the manifest.
    page.goto(f"{live_server.url}/evaluate/")
    page.get_by_label("Pod manifest (YAML or JSON)").fill(DEPLOYMENT)
    page.get_by_role("button", name="Evaluate").click()
    page.wait_for_url(re.compile(r"/decisions/\d+/$"))
    assert page.get_by_role("heading", level=1).inner_text().startswith("shop/web-")
    page.goto(f"{live_server.url}/evaluate/")
    page.get_by_label("Pod manifest (YAML or JSON)").fill("kind: Pod\nspec: [oops\n")
    page.get_by_role("button", name="Evaluate").click()
    error = page.locator("[role=alert]").first.inner_text()
    assert "<unicode string>" not in page.content()
    assert re.search(r"line \d+", error), error
    assert page.evaluate(WIDEST) is None

    # The LoadAware editor: each field's help states its default once.
    args = LoadAwareSchedulingArgs.objects.filter(profile__configuration=configuration).first()
    assert args is not None
    page.goto(f"{live_server.url}/policies/loadaware/{args.pk}/edit/")
    help_ = page.locator("#id_prod_usage_include_sys_helptext").inner_text()
    assert help_.count("Default") == 1 and "Default: false." in help_
    assert page.evaluate(WIDEST) is None

    # The profile editor's YAML mode: a misspelt plugin is refused with the name meant.
    profile = configuration.profiles.get(scheduler_name="default-scheduler")
    page.goto(f"{live_server.url}/policies/profiles/{profile.pk}/edit/")
    page.get_by_role("link", name="Whole profile as YAML").click()
    box = page.get_by_label("The profile, as in a v1", exact=False)
    assert "LoadAwareScheduling" in box.input_value()
    box.fill(
        "plugins:\n  multiPoint:\n    enabled: [{name: LoadAwareScheduling}]\n"
        "  score:\n    enabled: [{name: nodeResourcesfit, weight: 2}]\n"
    )
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"smaller-profile-yaml-{width}")
    page.get_by_role("button", name="Preview").click()
    assert "Read from your YAML" in page.inner_text("main")
    errors = page.locator("#id_plugins_score_enabled_errors").inner_text()
    assert "Did you mean NodeResourcesFit?" in errors
    assert page.evaluate(WIDEST) is None
