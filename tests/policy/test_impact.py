"""``POST /api/v1/loadaware-args/{id}/impact/`` on the demo cluster: what saving an edit would
change, before it is saved; nothing is saved."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.accounts.models import PolicyChange
from policy.clusters.engine import snapshot_for
from policy.clusters.models import ClusterSnapshot, SnapshotTrend
from policy.clusters.services import record_snapshot
from policy.policies.models import LoadAwareSchedulingArgs
from policy.web.pages import prepare_views
from scoring.synthetic import generate_cluster
from tests.conftest import NOW
from tests.policy.builders import loadaware_configuration

pytestmark = pytest.mark.django_db

OWN = "scheduling.koordinator.sh/usage-thresholds"


def impact_of(client: Any, args: LoadAwareSchedulingArgs, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/loadaware-args/{args.pk}/impact/", body, format="json")


def filtered_now(snapshot: ClusterSnapshot) -> int:
    """The dashboard's "filtered now" under the configuration in force."""
    prepare_views(snapshot)
    return SnapshotTrend.objects.filter(snapshot=snapshot).order_by("-id").first().filtered  # type: ignore[union-attr]


def test_before_is_filtered_now_and_after_is_what_saving_gives(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 40})
    args = LoadAwareSchedulingArgs.objects.get()
    before_now = filtered_now(demo_snapshot)
    changes = PolicyChange.objects.count()
    api_client.force_login(editor)
    response = impact_of(api_client, args, {"usage_thresholds": {"cpu": 70}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["filtered"]["before"] == before_now > 0
    assert body["filtered"]["added"] == []  # a raised threshold frees nodes, filters none
    assert len(body["filtered"]["removed"]) == before_now - body["filtered"]["after"]
    governed = [n.name for n in snapshot_for(demo_snapshot).nodes if OWN not in n.annotations]
    assert set(body["thresholds_changed"]) == set(governed)
    pending = body["pending"]
    assert pending["placeable_after"] >= pending["placeable_before"]
    assert pending["newly_unplaceable"] == []
    # nothing was saved or recorded
    args.refresh_from_db()
    assert args.usage_thresholds == {"cpu": 40} and PolicyChange.objects.count() == changes
    saved = api_client.patch(
        f"/api/v1/loadaware-args/{args.pk}/",
        {"usage_thresholds": {"cpu": 70}},
        format="json",
        HTTP_IF_MATCH=f'W/"{args.version}"',
    )
    assert saved.status_code == 200, saved.content
    assert filtered_now(demo_snapshot) == body["filtered"]["after"]


def load_aware_pending(snapshot: ClusterSnapshot) -> ClusterSnapshot:
    """A newer snapshot of the demo cluster whose default-scheduler pending pods stay off the
    nodes the args' thresholds do not govern (no NodeMetric, or their own annotation), so
    only the LoadAware threshold decides whether they fit."""
    objects = generate_cluster(nodes=12, seed=7, now=NOW)
    names = [
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "Node" and OWN in (o["metadata"].get("annotations") or {})
    ]
    metered = {o["metadata"]["name"] for o in objects if o["kind"] == "NodeMetric"}
    names += [
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "Node" and o["metadata"]["name"] not in metered
    ]
    keep_off = {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": names}
    for o in objects:
        spec = o.get("spec") or {}
        if o["kind"] == "Pod" and not spec.get("nodeName"):
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [keep_off]}]
                    }
                }
            }
    return record_snapshot(snapshot.cluster, objects, NOW + timedelta(seconds=1))


def test_a_threshold_fix_makes_its_pod_newly_placeable(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    stored = load_aware_pending(demo_snapshot)
    loadaware_configuration(stored.cluster, usage_thresholds={"cpu": 5})
    api_client.force_login(editor)
    args = LoadAwareSchedulingArgs.objects.get()
    pods = [p for p in snapshot_for(stored).pending if p.scheduler_name == "default-scheduler"]
    pod = pods[-1]  # an ordinary pod (the first ones ask more cpu than any node has)
    response = api_client.post(
        f"/api/v1/clusters/{stored.cluster_id}/evaluate/", {"pod": dict(pod.raw)}, format="json"
    )
    assert response.status_code == 201, response.content
    made = response.json()
    assert made["outcome"] == "unschedulable"
    fixes = api_client.get(f"/api/v1/decisions/{made['id']}/fixes/").json()["fixes"]
    fix = next(f for f in fixes if f["kind"] == "loadaware-threshold")
    value = fix["patch"]["value"]
    body = impact_of(api_client, args, {"usage_thresholds": {"cpu": value}}).json()
    assert pod.key in body["pending"]["newly_placeable"]
    assert fix["unblocks"] == len(body["pending"]["newly_placeable"]) - 1  # the others
    lower = impact_of(api_client, args, {"usage_thresholds": {"cpu": value - 1}}).json()
    assert pod.key not in lower["pending"]["newly_placeable"]


def test_an_invalid_edit_is_refused_as_a_patch_would_be(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 40})
    api_client.force_login(editor)
    args = LoadAwareSchedulingArgs.objects.get()
    response = impact_of(api_client, args, {"usage_thresholds": {"cpu": 140}})
    assert response.status_code == 400
    assert "usage_thresholds" in response.content.decode()


def test_a_profile_edit_that_drops_loadaware_filters_no_node(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    configuration = loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 40})
    profile = configuration.profiles.get()
    before_now = filtered_now(demo_snapshot)
    api_client.force_login(editor)
    response = api_client.post(
        f"/api/v1/profiles/{profile.pk}/impact/", {"plugins": {}}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["filtered"]["before"] == before_now > 0
    assert body["filtered"]["after"] == 0
    assert len(body["filtered"]["removed"]) == before_now
    assert body["pending"]["placeable_after"] >= body["pending"]["placeable_before"]
    profile.refresh_from_db()
    assert profile.plugins == {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}}


def test_the_loadaware_editor_preview_shows_the_impact(
    client: Any, api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    from tests.policy.test_pages_policies import args_data

    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 40})
    args = LoadAwareSchedulingArgs.objects.get()
    before_now = filtered_now(demo_snapshot)
    api_client.force_login(editor)
    expected = impact_of(api_client, args, {"usage_thresholds": {"cpu": 70}}).json()
    client.force_login(editor)
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds={"cpu": "70"}, preview="1"),
    )
    assert response.status_code == 200
    shown = response.context["preview"].impact
    assert shown == expected and shown["filtered"]["before"] == before_now
    page = response.content.decode()
    assert f'data-impact="after">{expected["filtered"]["after"]}<' in page
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 40}


def threshold_impact(client: Any, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/node-threshold-policies/impact/", body, format="json")


def test_a_new_threshold_policy_frees_the_nodes_it_annotates_once_pushed(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot, push_now: Any
) -> None:
    """A policy raising cpu to 90 on the filtered nodes the args govern: before is "filtered
    now", after frees exactly those nodes, and a save and a push make it so."""
    cluster = demo_snapshot.cluster
    loadaware_configuration(cluster, usage_thresholds={"cpu": 40})
    before_now = filtered_now(demo_snapshot)
    nodes = snapshot_for(demo_snapshot).nodes
    first = api_client
    first.force_login(editor)
    governed = {n.name for n in nodes if OWN not in n.annotations}
    body: dict[str, Any] = {"cluster": cluster.pk, "name": "raise", "node_names": sorted(governed)}
    body["usage_thresholds"] = {"cpu": 90}
    changes = PolicyChange.objects.count()
    response = threshold_impact(first, body)
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["filtered"]["before"] == before_now > 0
    assert set(answer["annotations_changed"]) == governed
    assert set(answer["thresholds_changed"]) == governed
    assert set(answer["filtered"]["removed"]) <= governed
    assert answer["filtered"]["added"] == []
    assert answer["pending"]["newly_unplaceable"] == []
    assert PolicyChange.objects.count() == changes  # nothing saved
    created = first.post("/api/v1/node-threshold-policies/", body, format="json")
    assert created.status_code == 201, created.content
    job = push_now(cluster)
    assert job.status == "succeeded", job.log
    assert filtered_now(cluster.latest_snapshot()) == answer["filtered"]["after"]


def test_threshold_policy_impact_of_an_edit_and_bad_input(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    cluster = demo_snapshot.cluster
    loadaware_configuration(cluster, usage_thresholds={"cpu": 40})
    api_client.force_login(editor)
    governed = sorted(n.name for n in snapshot_for(demo_snapshot).nodes if OWN not in n.annotations)
    policy = api_client.post(
        "/api/v1/node-threshold-policies/",
        {
            "cluster": cluster.pk,
            "name": "p",
            "node_names": governed[:2],
            "usage_thresholds": {"cpu": 90},
        },
        format="json",
    ).json()
    # An unpushed policy is not in force: its own impact is what a push would do.
    edit = threshold_impact(api_client, {"id": policy["id"], "usage_thresholds": {"cpu": 95}})
    assert edit.status_code == 200, edit.content
    assert set(edit.json()["annotations_changed"]) == set(governed[:2])
    bad = threshold_impact(api_client, {"id": policy["id"], "usage_thresholds": {"cpu": 140}})
    assert bad.status_code == 400 and "usage_thresholds" in bad.content.decode()
    missing = threshold_impact(api_client, {"id": 999999})
    assert missing.status_code == 404
    nonsense = threshold_impact(api_client, {"id": "x"})
    assert nonsense.status_code == 400 and "id" in nonsense.json()
    typo = threshold_impact(api_client, {"id": policy["id"], "profile": "default-schedular"})
    assert typo.status_code == 400
    assert "no profile 'default-schedular'" in typo.json()["profile"][0]
    no_cluster = threshold_impact(api_client, {"name": "q"})
    assert no_cluster.status_code == 400 and "cluster" in no_cluster.content.decode()


def test_the_threshold_policy_editor_preview_shows_the_impact(
    client: Any, api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    from tests.policy.test_pages_policies import threshold_data

    cluster = demo_snapshot.cluster
    loadaware_configuration(cluster, usage_thresholds={"cpu": 40})
    api_client.force_login(editor)
    expected = threshold_impact(
        api_client,
        {
            "cluster": cluster.pk,
            "name": "pool",
            "node_selector": {},
            "usage_thresholds": {"cpu": 50},
        },
    ).json()
    client.force_login(editor)
    response = client.post(
        "/policies/thresholds/new/", {"parent": cluster.pk, **threshold_data(preview="1")}
    )
    assert response.status_code == 200
    shown = response.context["preview"].impact
    assert shown == expected and shown["annotations_changed"]
    page = response.content.decode()
    count = len(expected["annotations_changed"])
    assert f'data-impact="annotations">{count}<' in page
    assert f'data-impact="after">{expected["filtered"]["after"]}<' in page


def test_a_score_change_names_the_recorded_decisions_it_would_move(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    """Packing instead of spreading filters no node, but moves pods: the newest recorded
    decisions are evaluated again, and each one named moves where evaluating it after the
    save puts it."""
    configuration = loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 95})
    profile = configuration.profiles.get()
    api_client.force_login(editor)
    cluster_id = demo_snapshot.cluster_id
    pods = [
        p for p in snapshot_for(demo_snapshot).pending if p.scheduler_name == "default-scheduler"
    ]
    made = []
    for pod in pods[-3:]:
        answer = api_client.post(
            f"/api/v1/clusters/{cluster_id}/evaluate/", {"pod": dict(pod.raw)}, format="json"
        )
        assert answer.status_code == 201, answer.content
        made.append({**answer.json(), "manifest": dict(pod.raw)})
    packing = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
    response = api_client.post(
        f"/api/v1/profiles/{profile.pk}/impact/", {"plugin_config": packing}, format="json"
    )
    assert response.status_code == 200, response.content
    decisions = response.json()["decisions"]
    assert decisions["evaluated"] == len(made)
    assert decisions["changed"], "packing moves at least one of the pods"
    assert response.json()["filtered"]["added"] == []
    saved = api_client.patch(
        f"/api/v1/profiles/{profile.pk}/",
        {"plugin_config": packing},
        format="json",
        HTTP_IF_MATCH=f'W/"{profile.version}"',
    )
    assert saved.status_code == 200, saved.content
    by_id = {m["id"]: m for m in made}
    for moved in decisions["changed"]:
        before = by_id[moved["decision"]]
        assert moved["before"] == before["selectedNode"]
        again = api_client.post(
            f"/api/v1/clusters/{cluster_id}/evaluate/", {"pod": before["manifest"]}, format="json"
        ).json()
        assert again["selectedNode"] == moved["after"] != moved["before"]
