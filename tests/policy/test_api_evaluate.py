"""Evaluating pods through the API, and the decision history it leaves."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from policy.decisions.models import PlacementDecision
from scoring import decision_codec
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def small_pod(name: str = "web-1", **resources: str) -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", resources or {"cpu": "100m"})])


def evaluate(api_client: Any, snapshot: ClusterSnapshot, body: dict[str, Any]) -> Any:
    return api_client.post(f"/api/v1/clusters/{snapshot.cluster_id}/evaluate/", body, format="json")


def test_viewer_evaluates_a_pod_and_the_decision_is_recorded(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    response = evaluate(api_client, demo_snapshot, {"pod": small_pod()})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["pod"] == "default/web-1"
    assert body["profile"] == "default-scheduler"
    assert body["selectedNode"] == body["nodes"][0]["name"]
    assert body["outcome"] == "scheduled"
    assert body["nodesPage"]["returned"] == len(body["nodes"]) and body["totalNodes"] == 12
    stored = PlacementDecision.objects.get(pk=body["id"])
    assert stored.selected_node == body["selectedNode"]
    assert stored.requested_by == viewer
    assert stored.snapshot_id == demo_snapshot.pk
    assert [n for n in stored.explanation["nodes"] if n in body["nodes"]] == body["nodes"]


def test_unschedulable_pod_gets_kube_scheduler_style_message(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    response = evaluate(api_client, demo_snapshot, {"pod": small_pod("huge", cpu="10000")})
    body = response.json()
    assert body["selectedNode"] is None
    assert body["outcome"] == "unschedulable"
    assert body["message"].startswith("0/12 nodes are available:")
    assert "Insufficient cpu" in body["message"]
    filtered = body["nodes"][0]
    fit = next(f for f in filtered["filters"] if f["plugin"] == "NodeResourcesFit")
    assert fit["reason"].startswith("Insufficient cpu")


def test_pod_as_yaml_text(api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot) -> None:
    api_client.force_login(viewer)
    text = json.dumps(small_pod("from-text"))
    response = evaluate(api_client, demo_snapshot, {"pod": text})
    assert response.status_code == 201
    assert response.json()["pod"] == "default/from-text"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "pod"),
        ({"pod": "a: [unclosed"}, "pod"),
        ({"pod": {"kind": "Deployment"}}, "pod"),
        ({"pod": {"kind": "Pod", "metadata": {}}}, "pod"),
        ({"pod": small_pod(cpu="lots")}, "pod"),
        ({"pod": {**small_pod(), "spec": {"schedulerName": "nope", "containers": []}}}, "pod"),
        ({"pod": small_pod(), "configuration": 99}, "configuration"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, body: Any, field: str
) -> None:
    api_client.force_login(viewer)
    response = evaluate(api_client, demo_snapshot, body)
    assert response.status_code == 400, response.content
    assert field in response.json()
    assert PlacementDecision.objects.count() == 0


def test_cluster_without_snapshot_is_a_400(api_client: Any, viewer: User) -> None:
    from policy.clusters.models import Cluster

    cluster = Cluster.objects.create(name="empty")
    api_client.force_login(viewer)
    response = api_client.post(
        f"/api/v1/clusters/{cluster.pk}/evaluate/", {"pod": small_pod()}, format="json"
    )
    assert response.status_code == 400
    assert "no snapshot" in response.json()["cluster"][0]


def test_unknown_cluster_is_a_404(api_client: Any, viewer: User) -> None:
    api_client.force_login(viewer)
    response = api_client.post(
        "/api/v1/clusters/999/evaluate/", {"pod": small_pod()}, format="json"
    )
    assert response.status_code == 404


def test_anonymous_and_roleless_users_cannot_evaluate(
    api_client: Any, nobody: User, demo_snapshot: ClusterSnapshot
) -> None:
    assert evaluate(api_client, demo_snapshot, {"pod": small_pod()}).status_code == 401
    api_client.force_login(nobody)
    assert evaluate(api_client, demo_snapshot, {"pod": small_pod()}).status_code == 403


def test_decision_history_filters_and_cursor_pages(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    for i in range(3):
        evaluate(api_client, demo_snapshot, {"pod": small_pod(f"web-{i}")})
    evaluate(api_client, demo_snapshot, {"pod": small_pod("huge", cpu="10000")})
    listing = api_client.get("/api/v1/decisions/", {"limit": 2}).json()
    assert [d["pod_name"] for d in listing["results"]] == ["huge", "web-2"]
    assert "explanation" not in listing["results"][0]
    second = api_client.get(listing["next"]).json()
    assert [d["pod_name"] for d in second["results"]] == ["web-1", "web-0"]
    unschedulable = api_client.get("/api/v1/decisions/", {"outcome": "unschedulable"}).json()
    assert [d["pod_name"] for d in unschedulable["results"]] == ["huge"]
    node = second["results"][0]["selected_node"]
    by_node = api_client.get("/api/v1/decisions/", {"node": node}).json()["results"]
    assert by_node and all(d["selected_node"] == node for d in by_node)
    detail = api_client.get(f"/api/v1/decisions/{unschedulable['results'][0]['id']}/").json()
    assert detail["explanation"]["selectedNode"] is None
    assert detail["requested_by"] == viewer.username
    assert (
        api_client.get("/api/v1/decisions/", {"pod": "web-0"}).json()["results"][0]["pod_name"]
        == "web-0"
    )


def test_evaluation_uses_the_clusters_configuration_and_records_its_version(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "bin-packing"}],
    }
    imported = api_client.post(
        "/api/v1/scheduler-configurations/import/",
        {"cluster": demo_snapshot.cluster_id, "document": json.dumps(document)},
        format="json",
    )
    assert imported.status_code == 201, imported.content
    pod = small_pod("packed")
    pod["spec"]["schedulerName"] = "bin-packing"
    body = evaluate(api_client, demo_snapshot, {"pod": pod}).json()
    assert body["profile"] == "bin-packing"
    assert body["configuration"] == imported.json()["id"]
    assert body["configurationVersion"] == imported.json()["version"]
    stale = evaluate(
        api_client, demo_snapshot, {"pod": pod, "configuration": body["configuration"] + 1}
    )
    assert stale.status_code == 400 and "configuration" in stale.json()


def test_a_bad_cursor_is_a_400_naming_it(api_client: Any, viewer: User) -> None:
    api_client.force_login(viewer)
    response = api_client.get("/api/v1/decisions/", {"cursor": "not-a-cursor"})
    assert response.status_code == 400
    assert "cursor" in response.json()


def test_evaluations_are_rate_limited_per_caller(
    api_client: Any, viewer: User, editor: User, demo_snapshot: ClusterSnapshot, settings: Any
) -> None:
    settings.API_EVALUATE_RATE = "2/minute"
    api_client.force_login(viewer)
    answers = [evaluate(api_client, demo_snapshot, {"pod": small_pod()}) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 429]
    assert int(answers[2]["Retry-After"]) > 0
    assert PlacementDecision.objects.count() == 2  # the refused one stored nothing
    api_client.force_login(editor)  # another caller has a count of its own
    assert evaluate(api_client, demo_snapshot, {"pod": small_pod()}).status_code == 201


def test_the_answer_pages_its_nodes_as_the_stored_decision_does(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, monkeypatch: Any
) -> None:
    monkeypatch.setattr(decision_codec, "DEFAULT_RANKED", 2)
    api_client.force_login(viewer)
    body = evaluate(api_client, demo_snapshot, {"pod": small_pod(cpu="6")}).json()
    stored = api_client.get(f"/api/v1/decisions/{body['id']}/").json()
    assert body["nodes"] == stored["explanation"]["nodes"]
    assert body["nodesPage"] == stored["nodes_page"]
    page = body["nodesPage"]
    assert page["ranked"] > 2 and page["filtered_groups"]
    assert page["returned"] == len(body["nodes"]) < page["total"] == body["totalNodes"] == 12
    everything = PlacementDecision.objects.get(pk=body["id"]).explanation["nodes"]
    assert body["nodes"][:2] == everything[:2]

    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/evaluate/?nodes_offset=10&nodes_limit=5"
    tail = api_client.post(url, {"pod": small_pod(cpu="6")}, format="json").json()
    assert [n["name"] for n in tail["nodes"]] == [n["name"] for n in everything[10:]]
    assert (tail["nodesPage"]["returned"], tail["nodesPage"]["omitted"]) == (2, 10)


def test_bad_paging_is_a_400_and_records_nothing(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/evaluate/?nodes_limit=0"
    response = api_client.post(url, {"pod": small_pod()}, format="json")
    assert response.status_code == 400
    assert "nodes_limit" in response.json()
    assert not PlacementDecision.objects.exists()


def deployment(replicas: int) -> dict[str, Any]:
    pod = small_pod("ignored")
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod["spec"]},
        },
    }


def test_a_deployment_is_evaluated_as_the_pod_its_template_makes(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """As what-if reads it: the ReplicaSet's first pod (one, whatever the replicas)."""
    api_client.force_login(viewer)
    response = evaluate(api_client, demo_snapshot, {"pod": deployment(1_000_000)})
    assert response.status_code == 201, response.content
    namespace, name = response.json()["pod"].split("/")
    assert namespace == "shop" and name.startswith("web-")
    decision = PlacementDecision.objects.get()
    assert decision.pod["kind"] == "Pod"
    assert decision.pod["metadata"]["labels"]["app"] == "web"
    [owner] = decision.pod["metadata"]["ownerReferences"]
    assert owner["kind"] == "ReplicaSet"


def test_a_workload_that_makes_no_pod_or_is_not_read_is_a_400(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    none = evaluate(api_client, demo_snapshot, {"pod": deployment(0)})
    assert none.status_code == 400 and "makes no pod" in none.json()["pod"][0]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}
    other = evaluate(api_client, demo_snapshot, {"pod": service})
    assert other.status_code == 400 and "got v1 Service" in other.json()["pod"][0]
    assert PlacementDecision.objects.count() == 0


def test_a_workload_with_a_malformed_metadata_is_a_400_naming_the_field(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    hostile = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": "x", "spec": None}
    response = evaluate(api_client, demo_snapshot, {"pod": hostile})
    assert response.status_code == 400, response.content
    assert "metadata: expected Mapping" in response.json()["pod"][0]
