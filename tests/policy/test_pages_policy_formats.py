"""Policy pages read as people read Kubernetes: label selectors as ``kubectl -l`` strings,
mappings as definition lists, empty name lists as "none", history with the forms' labels and
only what changed."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.accounts.changes import ChangeContext
from policy.clusters.models import ClusterSnapshot
from policy.policies import services as policies
from policy.policies.models import NodeThresholdPolicy
from policy.web import format as fmt
from policy.web.presenters import policies as ui

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()

SELECTOR = {
    "matchLabels": {"pool": "general"},
    "matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1b", "a"]},
        {"key": "gpu", "operator": "DoesNotExist"},
    ],
}


# -- format helpers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        (None, "none"),
        ({}, "every node"),
        ({"matchLabels": {"pool": "memory"}}, "pool=memory"),
        (SELECTOR, "pool=general, topology.kubernetes.io/zone in (a,eu-west-1b), !gpu"),
        (
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]},
            "tier notin (x)",
        ),
        ({"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}, "ssd"),
    ],
)
def test_label_selectors_read_as_kubernetes_writes_them(
    selector: dict[str, Any] | None, text: str
) -> None:
    assert fmt.label_selector(selector) == text


def test_names_values_and_pairs() -> None:
    assert fmt.names([]) == "none" and fmt.names(None) == "none"
    assert fmt.names(["node-a", "node-b"]) == "node-a, node-b"
    assert fmt.plain({}) == "none" and fmt.plain([]) == "none" and fmt.plain(None) == "—"
    assert fmt.plain(True) == "true"
    assert fmt.plain({"cpu": 70, "memory": 80}) == "cpu: 70, memory: 80"
    assert fmt.plain({"a": {"b": [1, 2]}}) == "a: {b: [1, 2]}"
    assert fmt.pairs({"cpu": 70}) == [("cpu", "70")]
    assert fmt.pairs([{"name": "LoadAwareScheduling", "args": {"x": 1}}]) == [
        ("LoadAwareScheduling", "args: {x: 1}")
    ]
    assert fmt.pairs({}) is None and fmt.pairs("text") is None
    assert ui.value_text(SELECTOR, "node_selector").startswith("pool=general, ")
    assert ui.value_text([], "node_names") == "none"


# -- pages ----------------------------------------------------------------------------------------


@pytest.fixture
def selected(demo_snapshot: ClusterSnapshot) -> NodeThresholdPolicy:
    return policies.NodeThresholdPolicyService().create(
        {
            "cluster": demo_snapshot.cluster,
            "name": "general-nodes",
            "node_selector": SELECTOR,
            "usage_thresholds": {"cpu": 60, "memory": 80},
        },
        SYSTEM,
    )


def test_index_and_detail_show_selectors_and_maps_readably(
    client: Client, viewer: User, selected: NodeThresholdPolicy
) -> None:
    client.force_login(viewer)
    index = client.get(f"/policies/?cluster={selected.cluster_id}").content.decode()
    expected = "pool=general, topology.kubernetes.io/zone in (a,eu-west-1b), !gpu"
    assert expected in index and "matchLabels" not in index
    detail = client.get(f"/policies/thresholds/{selected.pk}/").content.decode()
    assert expected in detail and "matchLabels" not in detail
    assert '<dl class="pairs"><dt>cpu</dt><dd><code class="wrap">60</code></dd>' in detail
    assert "[]" not in detail and "{&quot;matchLabels" not in detail
    # The empty list of names reads "none".
    assert '<dt>Node names (one per line)</dt><dd><code class="wrap">none</code>' in detail


def test_history_shows_labels_only_changed_fields_and_a_toggle(
    client: Client, viewer: User, selected: NodeThresholdPolicy
) -> None:
    policies.NodeThresholdPolicyService().update(
        selected.pk, {"priority": 5}, SYSTEM, expected_version=1
    )
    client.force_login(viewer)
    response = client.get(f"/policies/thresholds/{selected.pk}/history/")
    entries = response.context["entries"]
    assert [row[0] for row in entries[0].fields] == ["Priority"]
    assert ("Priority", "0", "5") in entries[0].fields
    created = {label: after for label, _, after in entries[1].fields}
    assert created["Node selector (YAML)"].startswith("pool=general, ")
    assert "Node names (one per line)" not in created  # None and [] read the same: "none"
    html = response.content.decode()
    assert "node_selector" not in html and "usage_thresholds" not in html
    assert 'href="?fields=all"' in html
    everything = client.get(f"/policies/thresholds/{selected.pk}/history/?fields=all")
    rows = {
        label: (before, after) for label, before, after in everything.context["entries"][0].fields
    }
    assert rows["Name"] == ("general-nodes", "general-nodes")  # unchanged, listed on request
    assert rows["Priority"] == ("0", "5")
    assert "Show only the changed fields" in everything.content.decode()
