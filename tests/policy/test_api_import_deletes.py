"""An import over the API that would delete stored profiles (the document no longer has them)
is refused unless each deletion is confirmed by name in ``delete_profiles``, as the import page
asks for a tick per profile; the unnamed profile is confirmed as ``default-scheduler``."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.policies.models import SchedulerConfiguration, SchedulerProfile
from tests.policy.policy_api import CONFIGS, ok

pytestmark = pytest.mark.django_db

UNNAMED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""
TWO = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: batch
"""
BATCH_ONLY = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: batch
"""


@pytest.fixture
def client(api_client: Any, editor: User) -> Any:
    api_client.force_login(editor)
    return api_client


def send(client: Any, cluster: int, text: str, **extra: Any) -> Any:
    body = {"cluster": cluster, "document": text, **extra}
    return client.post(f"{CONFIGS}import/", body, format="json", HTTP_IF_MATCH="*")


def test_an_import_that_deletes_profiles_needs_each_one_named(
    client: Any, demo_snapshot: Any
) -> None:
    cluster = demo_snapshot.cluster_id
    SchedulerConfiguration.objects.filter(cluster=cluster).delete()
    first = ok(send(client, cluster, UNNAMED), 201)
    profiles = SchedulerProfile.objects.filter(configuration_id=first["id"])
    names = lambda: sorted(profiles.values_list("scheduler_name", flat=True))  # noqa: E731
    assert names() == [""]

    refused = send(client, cluster, BATCH_ONLY)
    assert refused.status_code == 400, refused.content
    [message] = refused.json()["delete_profiles"]
    assert (
        "default-scheduler (schedulerName not set) (version 1; plugin args: NodeResourcesFit)"
        in message
    )
    assert names() == [""]  # nothing changed
    unrelated = send(client, cluster, BATCH_ONLY, delete_profiles=["batch"])
    assert unrelated.status_code == 400 and names() == [""]
    ok(send(client, cluster, BATCH_ONLY, delete_profiles=["default-scheduler"]))
    assert names() == ["batch"]

    ok(send(client, cluster, TWO))  # adds one, deletes none: nothing to confirm
    assert names() == ["batch", "default-scheduler"]
    refused = send(client, cluster, BATCH_ONLY)
    assert refused.status_code == 400
    assert "default-scheduler (version 1)" in refused.json()["delete_profiles"][0]
    ok(send(client, cluster, BATCH_ONLY, delete_profiles=["default-scheduler"]))
    assert names() == ["batch"]


def test_an_import_that_keeps_every_profile_needs_no_confirmation(
    client: Any, demo_snapshot: Any
) -> None:
    cluster = demo_snapshot.cluster_id
    SchedulerConfiguration.objects.filter(cluster=cluster).delete()
    first = ok(send(client, cluster, TWO), 201)
    again = send(
        client,
        cluster,
        TWO.replace(
            "- schedulerName: batch", "- schedulerName: batch\n  percentageOfNodesToScore: 50"
        ),
    )
    assert ok(again)["id"] == first["id"]
