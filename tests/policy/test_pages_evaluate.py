"""The evaluate page: a pasted, uploaded or pending pod, a profile, and the recorded decision."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from policy.clusters.models import ClusterSnapshot
from policy.core.choices import DecisionSource
from policy.decisions.models import PlacementDecision
from tests.policy.builders import loadaware_configuration, pod_yaml

pytestmark = pytest.mark.django_db


def post(client: Client, snapshot: ClusterSnapshot, **data: Any) -> Any:
    return client.post("/evaluate/", {"cluster": snapshot.cluster_id, **data})


def test_form_offers_clusters_pending_pods_and_profiles(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    response = client.get("/evaluate/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Evaluate a pod · schedboard</title>" in html
    form = response.context["form"]
    pending = [key for key, _ in form.fields["pending"].choices if key]
    assert len(pending) == 12 and all("/" in key for key in pending)
    assert [key for key, _ in form.fields["profile"].choices] == ["", "default-scheduler"]
    for field in ("cluster", "configuration", "profile", "pending", "manifest", "upload"):
        assert f'for="id_{field}"' in html  # every control has a label
    assert (
        client.get(f"/evaluate/?pending={pending[0]}").context["form"].initial["pending"]
        == pending[0]
    )


def test_pasted_manifest_is_evaluated_recorded_and_shown(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    response = post(client, demo_snapshot, manifest=pod_yaml("web-9", "shop"))
    decision = PlacementDecision.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/decisions/{decision.pk}/"
    assert decision.source == DecisionSource.UI
    assert decision.requested_by == viewer
    assert (decision.pod_namespace, decision.pod_name) == ("shop", "web-9")
    assert decision.outcome == "scheduled" and decision.selected_node


def test_uploaded_manifest(client: Client, viewer: User, demo_snapshot: ClusterSnapshot) -> None:
    client.force_login(viewer)
    upload = SimpleUploadedFile("pod.yaml", pod_yaml("uploaded").encode(), "application/yaml")
    response = post(client, demo_snapshot, upload=upload)
    assert response.status_code == 302
    assert PlacementDecision.objects.get().pod_name == "uploaded"


def test_pending_pod_from_the_snapshot(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    form = client.get("/evaluate/").context["form"]
    key = next(k for k, _ in form.fields["pending"].choices if k)
    assert post(client, demo_snapshot, pending=key).status_code == 302
    decision = PlacementDecision.objects.get()
    assert f"{decision.pod_namespace}/{decision.pod_name}" == key


def test_profile_overrides_the_scheduler_name(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    manifest = pod_yaml().replace("spec:\n", "spec:\n  schedulerName: nobody-knows\n")
    response = post(client, demo_snapshot, manifest=manifest)
    assert response.status_code == 200
    assert "no profile named &#x27;nobody-knows&#x27;" in response.content.decode()
    response = post(client, demo_snapshot, manifest=manifest, profile="default-scheduler")
    assert response.status_code == 302
    decision = PlacementDecision.objects.get()
    assert decision.profile == "default-scheduler"
    assert decision.pod["spec"]["schedulerName"] == "default-scheduler"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Paste a manifest, upload one, or pick a pending pod."),
        ({"manifest": "kind: Pod\n  bad: [indent"}, "Not valid YAML or JSON"),
        ({"manifest": "kind: Deployment\n"}, "Expected a v1 Pod, or an apps/v1 Deployment"),
        ({"manifest": "[1, 2]"}, "Expected a v1 Pod object"),
        ({"manifest": "kind: Pod\nspec: {containers: []}\n"}, "metadata.name: required"),
        ({"pending": "nope/none"}, "Select a valid choice"),
    ],
)
def test_bad_input_is_explained_next_to_the_field(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot, data: Any, message: str
) -> None:
    client.force_login(viewer)
    response = post(client, demo_snapshot, **data)
    assert response.status_code == 200
    assert message in response.content.decode().replace("&#x27;", "'")
    assert 'role="alert"' in response.content.decode()
    assert not PlacementDecision.objects.exists()


def test_two_pods_at_once_are_refused(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    upload = SimpleUploadedFile("pod.yaml", pod_yaml().encode())
    response = post(client, demo_snapshot, manifest=pod_yaml(), upload=upload)
    assert "Give one pod" in response.content.decode()


def test_configuration_choice(client: Client, viewer: User, demo_snapshot: ClusterSnapshot) -> None:
    configuration = loadaware_configuration(demo_snapshot.cluster)
    client.force_login(viewer)
    choices = client.get("/evaluate/").context["form"].fields["configuration"].choices
    assert [key for key, _ in choices] == ["", configuration.pk]
    response = post(client, demo_snapshot, manifest=pod_yaml(), configuration=configuration.pk)
    assert response.status_code == 302
    assert PlacementDecision.objects.get().configuration_id == configuration.pk


def test_cluster_without_snapshot(client: Client, viewer: User) -> None:
    from policy.clusters.models import Cluster

    cluster = Cluster.objects.create(name="empty")
    client.force_login(viewer)
    response = client.post("/evaluate/", {"cluster": cluster.pk, "manifest": pod_yaml()})
    assert "has no snapshot yet" in response.content.decode()


def test_evaluate_needs_a_role(
    client: Client, nobody: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(nobody)
    assert client.get("/evaluate/").status_code == 403
    assert post(client, demo_snapshot, manifest=pod_yaml()).status_code == 403
