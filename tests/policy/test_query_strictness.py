"""Query parameters the README promises a 400 for get one, naming the parameter; the
document endpoints (render/, effective/) answer what the schema says, errors as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from policy.policies.demo import seed_demo_policies
from policy.policies.models import SchedulerConfiguration
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


@pytest.fixture
def decision(api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot) -> int:
    api_client.force_login(viewer)
    pod = make_pod("w", containers=[make_container("a", {"cpu": "100m"})])
    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/evaluate/"
    return int(api_client.post(url, {"pod": pod}, format="json").json()["id"])


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("/api/v1/decisions/?limit=abc", "limit"),
        ("/api/v1/decisions/?limit=0", "limit"),
        ("/api/v1/decisions/?nodes_limit=false", "nodes_limit"),
        ("/api/v1/decisions/{decision}/?nodes_limit=false", "nodes_limit"),
        ("/api/v1/clusters/{cluster}/node-thresholds/render/?at=", "at"),
    ],
)
def test_a_malformed_parameter_is_a_400_naming_it(
    api_client: Any, decision: int, demo_snapshot: ClusterSnapshot, query: str, field: str
) -> None:
    url = query.format(decision=decision, cluster=demo_snapshot.cluster_id)
    response = api_client.get(url)
    assert response.status_code == 400, (url, response.content[:200])
    assert field in response.json()
    assert api_client.get("/api/v1/decisions/?limit=2").status_code == 200


@pytest.mark.parametrize("action", ["render", "effective"])
def test_documents_answer_what_the_schema_says(
    api_client: Any, operator: User, demo_snapshot: ClusterSnapshot, action: str
) -> None:
    seed_demo_policies(demo_snapshot.cluster)
    api_client.force_login(operator)
    configuration = SchedulerConfiguration.objects.get()
    url = f"/api/v1/scheduler-configurations/{configuration.pk}/{action}/"
    schema = json.loads(api_client.get("/api/schema/?format=json").content)
    operation = schema["paths"][f"/api/v1/scheduler-configurations/{{id}}/{action}/"]["get"]
    [fmt] = [p for p in operation["parameters"] if p["name"] == "format"]
    assert sorted(fmt["schema"]["enum"]) == ["json", "yaml"]
    for code in ("400", "401", "403", "404"):
        assert list(operation["responses"][code]["content"]) == ["application/json"], code

    as_json = api_client.get(url + "?format=json")
    assert as_json.status_code == 200 and as_json["Content-Type"] == "application/json"
    text = api_client.get(url + "?format=yaml")
    assert text["Content-Type"].startswith("application/yaml")
    assert as_json.json() == text.content.decode()  # the same text, as a JSON string
    refused = api_client.get(url + "?format=xml")
    assert refused.status_code == 400 and refused["Content-Type"] == "application/json"
    assert "format" in refused.json()
    missing = api_client.get(f"/api/v1/scheduler-configurations/999999/{action}/?format=yaml")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/json"
