"""Policy pages read as people read Kubernetes: label selectors as ``kubectl -l`` strings,
mappings as definition lists, empty name lists as "none", history with the forms' labels and
only what changed; a threshold policy's preview at a chosen time or while its window is open,
a warning naming a selector that matches no node, the cluster's time zone next to the window;
a new collect policy starting as the cluster default while there is none."""

from __future__ import annotations

import re
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


def threshold_post(cluster_id: int, **changes: str) -> dict[str, Any]:
    return {
        "parent": cluster_id,
        "name": "night",
        "enabled": "on",
        "priority": "10",
        "node_selector": "matchLabels: {pool: gpu}",
        "usage_thresholds-resource": ["cpu", ""],
        "usage_thresholds-value": ["40", ""],
        "active_from": "22:00",
        "active_until": "06:00",
        "preview": "1",
        **changes,
    }


def test_threshold_preview_at_a_time_and_while_the_window_is_open(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    cluster = demo_snapshot.cluster
    cluster.timezone = "Europe/Berlin"
    cluster.save()
    client.force_login(editor)
    page = client.get(f"/policies/thresholds/new/?parent={cluster.pk}").content.decode()
    assert "Daily time window (time zone Europe/Berlin, the cluster&#x27;s)" in page
    assert "Time zone: Europe/Berlin." in page

    response = client.post(
        "/policies/thresholds/new/",
        threshold_post(cluster.pk, preview_when="at", preview_at="02:30"),
    )
    assert response.status_code == 200
    preview = response.context["preview"].thresholds
    assert preview.when == "at 02:30" and preview.active is True
    assert f"{preview.local:%H:%M}" == "02:30"
    assert len(preview.nodes) == 4  # the gpu pool
    [group] = preview.groups
    assert (group.value, group.by, group.nodes) == (
        '{"usageThresholds":{"cpu":40}}',
        "night",
        preview.nodes,
    )
    html = response.content.decode()
    assert "(02:30 Europe/Berlin, today)" in html
    assert "Time zone: Europe/Berlin." in html  # next to the window, after a preview too

    response = client.post(
        "/policies/thresholds/new/",
        threshold_post(cluster.pk, preview_when="at", preview_at="12:00"),
    )
    preview = response.context["preview"].thresholds
    assert preview.active is False
    [group] = preview.groups  # window closed: no annotation
    assert (group.value, group.by, group.nodes) == ("(none)", "", preview.nodes)

    response = client.post(
        "/policies/thresholds/new/", threshold_post(cluster.pk, preview_when="window")
    )
    preview = response.context["preview"].thresholds
    assert preview.when.startswith("while its time window is open (22:00–06:00)")
    assert preview.active is True and f"{preview.local:%H:%M}" == "22:00"
    assert response.context["preview"].after.title.startswith(
        "scheduling.koordinator.sh/usage-thresholds per node (then"
    )

    response = client.post(
        "/policies/thresholds/new/", threshold_post(cluster.pk, preview_when="at")
    )
    assert response.status_code == 400
    assert response.context["form"].errors["preview_at"] == ["Give the time to preview at."]
    assert not NodeThresholdPolicy.objects.exists()

    # Saving ignores the preview fields.
    data = threshold_post(cluster.pk, preview_when="at", preview_at="02:30", save="1")
    del data["preview"]
    response = client.post("/policies/thresholds/new/", data)
    saved = NodeThresholdPolicy.objects.get()
    assert response.status_code == 302 and saved.node_selector == {"matchLabels": {"pool": "gpu"}}
    detail = client.get(f"/policies/thresholds/{saved.pk}/").content.decode()
    assert "Preview at" not in detail and "Evaluate the preview" not in detail
    assert "Daily time window (time zone Europe/Berlin, the cluster&#x27;s)" in detail
    # The detail page evaluates at a chosen time or while the window is open, too.
    at = client.get(f"/policies/thresholds/{saved.pk}/?when=at&at=23:15")
    assert at.context["when"] == "at 23:15" and at.context["active"] is True
    assert at.context["thresholds"].groups[0].by == "night"
    noon = client.get(f"/policies/thresholds/{saved.pk}/?when=at&at=12:00")
    assert noon.context["active"] is False
    window = client.get(f"/policies/thresholds/{saved.pk}/?when=window")
    assert window.context["clock"] == "22:00" and window.context["active"] is True
    bad = client.get(f"/policies/thresholds/{saved.pk}/?when=at&at=25:99")
    assert bad.status_code == 200 and bad.context["when"] == "now"


def test_a_selector_matching_no_node_is_a_warning_naming_it(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    cluster = demo_snapshot.cluster
    client.force_login(editor)
    data = threshold_post(cluster.pk, node_selector="matchLabels: {pool: memory}")
    response = client.post("/policies/thresholds/new/", data)
    html = response.content.decode()
    assert response.context["preview"].thresholds.nodes == []
    assert 'role="alert" id="no-match"' in html
    assert "The node selector pool=memory matches no node of the newest snapshot" in html
    data["save"] = "1"
    del data["preview"]
    saved = client.post("/policies/thresholds/new/", data)
    detail = client.get(saved["Location"]).content.decode()
    assert "The node selector pool=memory matches no node of the newest snapshot" in detail
    names = threshold_post(cluster.pk, node_selector="", node_names="ghost-1\nghost-2", name="g")
    html = client.post("/policies/thresholds/new/", names).content.decode()
    assert "None of the node names (ghost-1, ghost-2) is a node of the newest snapshot" in html


def test_a_new_collect_policy_starts_as_the_default_only_while_there_is_none(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    cluster = demo_snapshot.cluster
    client.force_login(editor)
    response = client.get(f"/policies/collect/new/?parent={cluster.pk}")
    form = response.context["form"]
    assert form["is_default"].value() is True
    html = response.content.decode()
    assert "has no default collect policy yet, so this one starts as the cluster default" in html
    assert re.search(r'<input type="checkbox" name="is_default"[^>]* checked>', html)
    default = policies.CollectPolicyService().create(
        {
            "cluster": cluster,
            "name": "everywhere",
            "is_default": True,
            "report_interval_seconds": 30,
        },
        SYSTEM,
    )
    response = client.get(f"/policies/collect/new/?parent={cluster.pk}")
    assert response.context["form"]["is_default"].value() is False
    html = response.content.decode()
    assert "default collect policy is everywhere, so this one starts as a per-node override" in html
    assert "placeholder=" in html
    # An existing policy's form is as stored.
    edit = client.get(f"/policies/collect/{default.pk}/edit/")
    assert edit.context["form"]["is_default"].value() is True
