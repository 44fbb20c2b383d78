"""Hostile input never makes a 500: malformed JSON, wrong types, huge numbers, NULs, deep
nesting, oversized bodies."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import Cluster
from policy.policies.models import SchedulerConfiguration, SchedulerProfile
from tests.policy.policy_api import ARGS, CONFIGS, PROFILES, THRESHOLDS

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(api_client: Any, editor: User) -> Any:
    api_client.force_login(editor)
    return api_client


@pytest.fixture
def profile(demo_snapshot: Any) -> SchedulerProfile:
    cluster = Cluster.objects.get(pk=demo_snapshot.cluster_id)
    configuration = SchedulerConfiguration.objects.create(cluster=cluster)
    return SchedulerProfile.objects.create(configuration=configuration, scheduler_name="a")


def test_malformed_json(client: Any, profile: SchedulerProfile) -> None:
    for body in ['{"configuration": ', "[1, 2", '{"a": NaN}', "\xff\xfe", "null", "[]", '"text"']:
        response = client.generic("POST", PROFILES, body, content_type="application/json")
        assert response.status_code == 400, (body, response.content)
        assert response.json()["errors"]


@pytest.mark.parametrize(
    "data",
    [
        {"scheduler_name": None},
        {"scheduler_name": "x" * 300},
        {"scheduler_name": "nul\x00byte"},
        {"position": -1},
        {"position": 10**30},
        {"percentage_of_nodes_to_score": 1e308},
        {"percentage_of_nodes_to_score": "many"},
        {"plugins": []},
        {"plugins": {"score": {"enabled": [{"name": "X", "weight": 2**40}]}}},
        {"plugins": {"score": {"enabled": "X"}}},
        {"plugins": {"placementScore": {}}},
        {"plugin_config": [{"name": "X", "args": [1]}]},
        {"plugin_config": [{"name": "X", "args": {"k": "nul\x00"}}]},
        {"plugin_config": [{"name": "X", "args": {"n": 2**80}}]},
        {
            "plugin_config": [
                {
                    "name": "X",
                    "args": {
                        "a": {
                            "b": {
                                "c": {
                                    "d": {
                                        "e": {
                                            "f": {
                                                "g": {
                                                    "h": {
                                                        "i": {
                                                            "j": {
                                                                "k": {
                                                                    "l": {
                                                                        "m": {
                                                                            "n": {
                                                                                "o": {"p": {"q": 1}}
                                                                            }
                                                                        }
                                                                    }
                                                                }
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    },
                }
            ]
        },
        {"plugin_config": "X"},
        {"configuration": "abc"},
        {"configuration": 2**70},
        {"unknown_field": 1},
    ],
)
def test_bad_profile_fields_are_400(
    client: Any, profile: SchedulerProfile, data: dict[str, Any]
) -> None:
    response = client.post(
        PROFILES, {"configuration": profile.configuration_id, **data}, format="json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"]


@pytest.mark.parametrize(
    "data",
    [
        {"usage_thresholds": {"cpu": 2**64}},
        {"usage_thresholds": {"cpu": None}},
        {"usage_thresholds": ["cpu"]},
        {"usage_thresholds": {"": 5}},
        {"resource_weights": {f"r{i}": 1 for i in range(100)}},
        {"estimator": "\x00"},
        {"aggregated_usage_aggregated_duration": "9999999999999999999999h"},
        {"node_metric_expiration_seconds": 2**63},
        {"supported_resources": "cpu"},
        {"dominant_resource_weight": True},
    ],
)
def test_bad_args_fields_are_400(
    client: Any, profile: SchedulerProfile, data: dict[str, Any]
) -> None:
    response = client.post(ARGS, {"profile": profile.pk, **data}, format="json")
    assert response.status_code == 400, response.content


@pytest.mark.parametrize(
    "raw",
    [
        '{"scheduler_name": "\\ud800"}',
        '{"plugin_config": [{"name": "X", "args": {"\\udfff": 1}}]}',
        '{"plugin_config": [{"name": "X", "args": {"k": "\\u0000"}}]}',
    ],
)
def test_lone_surrogates_and_nul_escapes_are_400(
    client: Any, profile: SchedulerProfile, raw: str
) -> None:
    body = raw[:-1] + f', "configuration": {profile.configuration_id}}}'
    response = client.generic("POST", PROFILES, body, content_type="application/json")
    assert response.status_code == 400, response.content


def test_unicode_is_fine_where_allowed(client: Any, profile: SchedulerProfile) -> None:
    response = client.patch(
        f"{CONFIGS}{profile.configuration_id}/",
        {"description": "politique de l’équipe 調度 🚀"},
        format="json",
        HTTP_IF_MATCH="*",
    )
    assert response.status_code == 200
    assert response.json()["description"] == "politique de l’équipe 調度 🚀"


def test_oversized_body_is_413(client: Any, profile: SchedulerProfile, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    big = {"configuration": profile.configuration_id, "scheduler_name": "x" * 5000}
    response = client.post(PROFILES, big, format="json")
    assert response.status_code == 413
    assert "2048" in response.json()["detail"]


def test_chunked_body_without_length_is_capped(
    client: Any, profile: SchedulerProfile, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    body = ('{"scheduler_name": "' + "x" * 5000 + '"}').encode()
    response = client.generic(
        "POST", PROFILES, body, content_type="application/json", CONTENT_LENGTH=""
    )
    assert response.status_code in (400, 413)


def test_bad_query_parameters(client: Any, profile: SchedulerProfile) -> None:
    assert client.get(f"{PROFILES}?configuration=1.5").status_code == 400
    assert client.get(f"{PROFILES}?scheduler_name=%00").status_code in (200, 400)
    assert client.get(f"{PROFILES}?ordering=nonsense").status_code == 200
    bad_page = client.get(f"{PROFILES}?limit=-1&offset=abc")
    assert bad_page.status_code == 400
    assert bad_page.json()["limit"] == ["Must be a whole number of at least 1."]
    assert client.get(f"{PROFILES}?limit=1000000").status_code == 200  # capped, not refused
    assert client.get(f"{THRESHOLDS}?enabled=1").status_code == 400
    assert client.get(f"{THRESHOLDS}?enabled=").status_code == 400
    assert client.get(f"{THRESHOLDS}?enabled=false").status_code == 200
    assert client.get(f"{PROFILES}{2**70}/").status_code == 404
    assert client.get(f"{PROFILES}abc/").status_code == 404
    assert client.get(f"{THRESHOLDS}?cluster=-3").status_code == 400
    assert client.get("/api/v1/policy-changes/?request_id=nope").status_code == 400
