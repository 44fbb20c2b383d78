"""How to place a pod, on the demo cluster: ``GET /api/v1/decisions/{id}/fixes/`` and the
decision page's section. Each listed fix is applied the way a user would (the pod patched and
evaluated again, the LoadAware args edited over the API) and must place the pod."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.engine import snapshot_for
from policy.clusters.models import ClusterSnapshot
from scoring.advisor import apply_merge_patch
from tests.policy.builders import loadaware_configuration
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def evaluate(client: Any, snapshot: ClusterSnapshot, pod: dict[str, Any]) -> dict[str, Any]:
    response = client.post(
        f"/api/v1/clusters/{snapshot.cluster_id}/evaluate/", {"pod": pod}, format="json"
    )
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def fixes_of(client: Any, decision: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/decisions/{decision['id']}/fixes/")
    assert response.status_code == 200, response.content
    fixes: list[dict[str, Any]] = response.json()["fixes"]
    return fixes


def ordinary(name: str, **spec: Any) -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", {"cpu": "500m"})], spec=spec)


def assert_pod_fixes_place(
    client: Any, snapshot: ClusterSnapshot, pod: dict[str, Any], fixes: list[dict[str, Any]]
) -> None:
    for fix in (f for f in fixes if f["target"] == "pod"):
        again = evaluate(client, snapshot, apply_merge_patch(pod, fix["patch"]))
        assert again["outcome"] == "scheduled", fix
        assert again["selectedNode"] in fix["nodes"]


def kinds(fixes: list[dict[str, Any]]) -> list[str]:
    return [f["kind"] for f in fixes]


def test_a_pending_pod_no_node_has_room_for(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    cpu = snapshot_for(demo_snapshot).resource_index["cpu"]
    largest = int(snapshot_for(demo_snapshot).allocatable[:, cpu].max())
    too_big = next(
        p for p in snapshot_for(demo_snapshot).pending if p.requests.get("cpu", 0) > largest
    )
    pod = dict(too_big.raw)  # the demo cluster's own unschedulable pod
    decision = evaluate(api_client, demo_snapshot, pod)
    assert decision["outcome"] == "unschedulable"
    fixes = fixes_of(api_client, decision)
    assert "lower-request" in kinds(fixes)[:3]
    assert_pod_fixes_place(api_client, demo_snapshot, pod, fixes)


def test_an_untolerated_taint(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    pod = ordinary("trainer", nodeSelector={"pool": "gpu"})  # gpu nodes are tainted
    decision = evaluate(api_client, demo_snapshot, pod)
    assert decision["outcome"] == "unschedulable"
    fixes = fixes_of(api_client, decision)
    assert "add-toleration" in kinds(fixes)[:3]
    tolerate = next(f for f in fixes if f["kind"] == "add-toleration")
    assert tolerate["patch"]["spec"]["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    ]
    untaint = next(f for f in fixes if f["kind"] == "untaint-node")
    assert untaint["target"] == "node" and isinstance(untaint["unblocks"], int)
    assert_pod_fixes_place(api_client, demo_snapshot, pod, fixes)


def test_a_node_selector_no_node_matches(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    pod = ordinary("train", nodeSelector={"accelerator": "nvidia-a100"})
    decision = evaluate(api_client, demo_snapshot, pod)
    fixes = fixes_of(api_client, decision)
    assert "relax-node-selector" in kinds(fixes)[:3]
    label = next(f for f in fixes if f["kind"] == "label-node")
    ((name, patch),) = label["patch"].items()
    assert patch == {"metadata": {"labels": {"accelerator": "nvidia-a100"}}}
    assert label["nodes"] == [name]
    assert_pod_fixes_place(api_client, demo_snapshot, pod, fixes)


def test_a_loadaware_threshold_fix_saved_over_the_api_places_the_pod(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 5})
    pod = ordinary("web", nodeSelector={"kubernetes.io/hostname": _metered(demo_snapshot)})
    decision = evaluate(api_client, demo_snapshot, pod)
    assert decision["outcome"] == "unschedulable"
    assert "cpu usage exceed threshold" in decision["message"]
    fixes = fixes_of(api_client, decision)
    assert "loadaware-threshold" in kinds(fixes)[:3]
    fix = next(f for f in fixes if f["kind"] == "loadaware-threshold")
    patch = fix["patch"]
    assert (patch["field"], patch["current"]) == ("usageThresholds.cpu", 5)
    assert patch["value"] > 5 and fix["unblocks"] >= 0
    target = patch["object"]
    saved = api_client.patch(
        f"/api/v1/loadaware-args/{target['id']}/",
        {"usage_thresholds": {"cpu": patch["value"]}},
        format="json",
        HTTP_IF_MATCH=f'W/"{target["version"]}"',
    )
    assert saved.status_code == 200, saved.content
    again = evaluate(api_client, demo_snapshot, pod)
    assert again["outcome"] == "scheduled" and again["selectedNode"] in fix["nodes"]


def test_one_threshold_point_less_does_not_place_it(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 5})
    pod = ordinary("web", nodeSelector={"kubernetes.io/hostname": _metered(demo_snapshot)})
    fixes = fixes_of(api_client, evaluate(api_client, demo_snapshot, pod))
    fix = next(f for f in fixes if f["kind"] == "loadaware-threshold")
    target = fix["patch"]["object"]
    lower = {"cpu": fix["patch"]["value"] - 1}
    saved = api_client.patch(
        f"/api/v1/loadaware-args/{target['id']}/",
        {"usage_thresholds": lower},
        format="json",
        HTTP_IF_MATCH=f'W/"{target["version"]}"',
    )
    assert saved.status_code == 200, saved.content
    assert evaluate(api_client, demo_snapshot, pod)["outcome"] == "unschedulable"


def _metered(snapshot: ClusterSnapshot) -> str:
    """A node the args' thresholds govern (a fresh NodeMetric, no thresholds annotation)."""
    engine_snapshot = snapshot_for(snapshot)
    own = "scheduling.koordinator.sh/usage-thresholds"
    return next(
        n.name
        for n in engine_snapshot.nodes
        if n.name in engine_snapshot.node_metrics
        and own not in n.annotations
        and n.labels.get("pool") != "gpu"
        and not n.unschedulable
    )


def test_a_scheduled_pod_has_no_fixes(
    api_client: Any, viewer: User, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    decision = evaluate(api_client, demo_snapshot, ordinary("web"))
    assert decision["outcome"] == "scheduled"
    api_client.force_login(viewer)
    assert fixes_of(api_client, decision) == []


def test_the_decision_page_says_how_to_place_the_pod(
    client: Any, api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    pod = ordinary("train", nodeSelector={"accelerator": "nvidia-a100"})
    decision = evaluate(api_client, demo_snapshot, pod)
    fixes = fixes_of(api_client, decision)
    client.force_login(editor)
    page = client.get(f"/decisions/{decision['id']}/").content.decode()
    assert "How to place this pod" in page
    for fix in fixes:
        assert f'data-fix-kind="{fix["kind"]}"' in page
        assert fix["summary"] in page
    scheduled = evaluate(api_client, demo_snapshot, ordinary("web"))
    assert (
        "How to place this pod" not in client.get(f"/decisions/{scheduled['id']}/").content.decode()
    )


def test_an_unknown_decision_is_404(api_client: Any, viewer: User, db: None) -> None:
    api_client.force_login(viewer)
    assert api_client.get("/api/v1/decisions/999999/fixes/").status_code == 404
