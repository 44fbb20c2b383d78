"""YAML aliases that amplify bytes rather than nodes (one long string referenced thousands of
times) are refused while the document is composed, at every entry point, before anything the
size of the expansion is built; a what-if stores no more than its request carried."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import ClusterSnapshot
from policy.decisions import whatif
from policy.decisions.models import PlacementDecision, WhatIfRun
from policy.policies.models import SchedulerConfiguration
from scoring.inputs import InputLimitError, load_yaml
from tests.policy.builders import pod_yaml

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

MEMORY_BOUND = 300 * 1024 * 1024


def byte_bomb(chars: int = 210_000, references: int = 10_000, key: str = "s") -> str:
    """A ``chars``-character string referenced ``references`` times: few nodes, gigabytes."""
    refs = ", ".join(["*s"] * references)
    return f'{key}: &s "{"x" * chars}"\nmany: [{refs}]\n'


def configuration_bomb(chars: int = 5_000, references: int = 10_000) -> str:
    """A KubeSchedulerConfiguration whose kept-as-written plugin args (Coscheduling) hold a
    string referenced ``references`` times: about 55 KB of text."""
    refs = ", ".join(["*s"] * references)
    return (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  pluginConfig:\n"
        "  - name: Coscheduling\n"
        f'    args: {{note: &s "{"x" * chars}", list: [{refs}]}}\n'
    )


@pytest.fixture
def peak_memory() -> Iterator[Callable[[], int]]:
    """The peak of Python allocations while the test runs, in bytes."""
    tracemalloc.start()
    try:
        yield lambda: tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_loader_counts_characters_as_well_as_nodes() -> None:
    with pytest.raises(InputLimitError, match=r"characters.*alias bomb"):
        load_yaml(byte_bomb())
    # An ordinary use of aliases is read, long values and all.
    ordinary = load_yaml(byte_bomb(chars=20_000, references=5))
    assert len(ordinary["many"]) == 5 and ordinary["many"][0] == "x" * 20_000


def test_api_evaluate_refuses_a_byte_bomb_without_building_it(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, peak_memory: Any
) -> None:
    api_client.force_login(viewer)
    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/evaluate/"
    body = json.dumps({"pod": byte_bomb(key="kind")})
    response = api_client.post(url, body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    [error] = response.json()["errors"]
    assert error["field"] == "pod" and "alias bomb" in error["detail"]
    assert peak_memory() < MEMORY_BOUND
    assert not PlacementDecision.objects.exists()


def test_evaluate_page_refuses_a_byte_bomb(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot, peak_memory: Any
) -> None:
    client.force_login(viewer)
    response = client.post(
        "/evaluate/", {"cluster": demo_snapshot.cluster_id, "manifest": byte_bomb()}
    )
    assert response.status_code in (200, 400)
    assert "alias bomb" in " ".join(response.context["form"].errors["manifest"])
    assert peak_memory() < MEMORY_BOUND
    assert not PlacementDecision.objects.exists()


def test_import_refuses_a_byte_bomb_on_the_api_and_the_page(
    api_client: Any, client: Client, editor: User, demo_snapshot: ClusterSnapshot, peak_memory: Any
) -> None:
    api_client.force_login(editor)
    response = api_client.post(
        "/api/v1/scheduler-configurations/import/",
        {"cluster": demo_snapshot.cluster_id, "document": configuration_bomb(chars=210_000)},
        format="json",
    )
    assert response.status_code == 400 and "alias bomb" in json.dumps(response.json())
    client.force_login(editor)
    response = client.post(
        "/policies/configurations/import/",
        {"cluster": demo_snapshot.cluster_id, "document": configuration_bomb(chars=210_000)},
    )
    assert response.status_code in (200, 400)
    assert "alias bomb" in response.content.decode()
    assert peak_memory() < MEMORY_BOUND
    assert not SchedulerConfiguration.objects.exists()


def test_what_if_refuses_a_byte_bomb_on_the_api_and_the_page(
    api_client: Any, client: Client, editor: User, demo_snapshot: ClusterSnapshot, peak_memory: Any
) -> None:
    api_client.force_login(editor)
    response = api_client.post(
        "/api/v1/what-if/",
        {
            "cluster": demo_snapshot.cluster_id,
            "workload": pod_yaml("web-1"),
            "baseline": {"source": "defaults"},
            "candidate": {"source": "custom", "yaml": configuration_bomb()},
        },
        format="json",
    )
    assert response.status_code == 400, response.content[:300]
    assert "alias bomb" in json.dumps(response.json())
    client.force_login(editor)
    response = client.post(
        "/what-if/",
        {
            "cluster": demo_snapshot.cluster_id,
            "workload_source": "manifests",
            "workload": byte_bomb(),
            "baseline_source": "defaults",
            "candidate_source": "defaults",
        },
    )
    assert response.status_code in (200, 400)
    assert "alias bomb" in response.content.decode()
    assert peak_memory() < MEMORY_BOUND
    assert not WhatIfRun.objects.exists()


def test_a_what_if_stores_no_more_than_its_request_carried(demo_snapshot: ClusterSnapshot) -> None:
    """Aliases within the expansion bound can still make a document several times its text;
    a side's stored document is bounded too, so the row stays within 1 MB of the request."""
    text = configuration_bomb(chars=30_000, references=10)  # ~30 KB, 330 KB expanded
    assert len(json.dumps(load_yaml(text))) > 256 * 1024
    with pytest.raises(whatif.WhatIfInvalid) as caught:
        whatif.start(
            demo_snapshot.cluster,
            workload_source="manifests",
            workload=pod_yaml("web-1"),
            baseline=whatif.ConfigurationInput("defaults"),
            candidate=whatif.ConfigurationInput("custom", text),
        )
    [message] = caught.value.errors["candidate"]
    assert "KiB" in message and "alias" in message
    run = whatif.start(
        demo_snapshot.cluster,
        workload_source="manifests",
        workload=pod_yaml("web-1"),
        baseline=whatif.ConfigurationInput("defaults"),
        candidate=whatif.ConfigurationInput("custom", configuration_bomb(chars=100, references=20)),
    )
    stored = WhatIfRun.objects.get(pk=run.pk)
    assert len(json.dumps(stored.candidate)) + len(stored.workload) < 1024 * 1024
    assert yaml.safe_load(stored.workload)["metadata"]["name"] == "web-1"
