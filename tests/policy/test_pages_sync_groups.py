"""A dry-run of many identical changes reads as one line per kind of change: the objects a
click away, a page at a time; notes that say the same of many nodes read as one."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from policy.sync.models import SyncJob, SyncJobKind
from policy.web.presenters import sync as present
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.policy.builders import unpushed_policies

pytestmark = pytest.mark.django_db


def node_names(snapshot: ClusterSnapshot) -> list[str]:
    return [o["metadata"]["name"] for o in snapshot.objects if o["kind"] == "Node"]


def test_identical_changes_are_one_line_with_the_nodes_a_click_away(
    client: Any,
    operator: User,
    demo_snapshot: ClusterSnapshot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(present, "OBJECTS_PER_PAGE", 5)  # 12 demo nodes: three pages
    names = node_names(demo_snapshot)
    policy = unpushed_policies(demo_snapshot.cluster, names)
    client.force_login(operator)
    base = f"/clusters/{policy.cluster_id}/sync/"
    review = client.get(client.post(f"{base}plan/")["Location"])
    plan = SyncJob.objects.get(kind=SyncJobKind.DRY_RUN)
    written = sorted(c["name"] for c in plan.changes if c["kind"] == "Node")
    left_alone = sorted(set(names) - set(written))
    assert len(written) >= 5 and left_alone  # the demo has annotations set by someone else

    html = review.content.decode()
    assert html.count('<tr id="group-') == 2  # the configuration, and every node at once
    node_line = html.split(f'data-count="{len(written)}"')[1].split("</tr>")[0]
    assert f"<strong>{len(written)}</strong> Nodes" in node_line
    assert ", ".join(written[: present.NAMES_SHOWN]) in node_line
    assert "?group=2#group-2" in node_line

    # One click: the nodes, a page at a time.
    seen: list[str] = []
    url = f"{base}plan/{plan.pk}/?group=2"
    for page in (1, 2, 3):
        html = client.get(f"{url}&objects={page}").content.decode()
        listed = html.split('<ul class="plain object-list">')[1].split("</ul>")[0]
        seen += [item.split("</li>")[0] for item in listed.split("<li>")[1:]]
    assert seen == written

    # The nodes left alone are one note.
    notes = html.split('id="notes-h"')[1].split("</section>")[0]
    if len(left_alone) > 1:
        assert f"{len(left_alone)} nodes: {KEY} was set by someone else; left alone" in notes
        assert ", ".join(left_alone) in notes
    else:
        assert f"node {left_alone[0]}: {KEY} was set by someone else; left alone" in notes


def test_groups_and_notes() -> None:
    change = {"kind": "Node", "field": "f", "action": "add", "before": None, "diff": ""}
    changes = [
        {**change, "name": "a", "after": "x"},
        {**change, "name": "b", "after": "y"},
        {**change, "name": "c", "after": "x"},
        {**change, "kind": "ConfigMap", "namespace": "ns", "name": "cm", "after": "x"},
    ]
    groups = present.change_groups(changes)
    assert [(g.object_ref, g.objects, g.after) for g in groups] == [
        ("Node", ["a", "c"], "x"),
        ("Node/b", ["b"], "y"),
        ("ConfigMap/ns/cm", ["ns/cm"], "x"),
    ]
    notes = present.note_groups(
        [
            "node a: k was set by someone else; left alone",
            "node b no longer exists",
            "other",
            "node c: k was set by someone else; left alone",
        ]
    )
    assert [(n.text, n.nodes) for n in notes] == [
        ("2 nodes: k was set by someone else; left alone", ["a", "c"]),
        ("node b no longer exists", ["b"]),
        ("other", []),
    ]
