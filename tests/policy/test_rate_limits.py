"""Rate limits count per user: more tokens buy no more evaluations or comparisons, and the
evaluate and what-if pages share the API's count (429 with Retry-After, nothing stored)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from policy.accounts.services import create_token
from policy.clusters.models import ClusterSnapshot
from policy.decisions.models import PlacementDecision, WhatIfRun
from tests.policy.builders import pod_yaml
from tests.scoring.builders import make_container, make_pod

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


def with_token(user: User, name: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {create_token(user, name=name)[1]}")
    return client


def evaluate(client: APIClient, snapshot: ClusterSnapshot) -> int:
    pod = make_pod("web-1", containers=[make_container("app", {"cpu": "100m"})])
    url = f"/api/v1/clusters/{snapshot.cluster_id}/evaluate/"
    return int(client.post(url, {"pod": pod}, format="json").status_code)


def test_evaluations_count_per_user_across_tokens_and_the_page(
    client: Client, viewer: User, editor: User, demo_snapshot: ClusterSnapshot, settings: Any
) -> None:
    settings.API_EVALUATE_RATE = "3/minute"
    first, second = with_token(viewer, "one"), with_token(viewer, "two")
    assert [evaluate(first, demo_snapshot), evaluate(second, demo_snapshot)] == [201, 201]
    client.force_login(viewer)
    page = client.post(
        "/evaluate/", {"cluster": demo_snapshot.cluster_id, "manifest": pod_yaml("web-2")}
    )
    assert page.status_code == 302  # the third of three
    assert evaluate(with_token(viewer, "three"), demo_snapshot) == 429  # a new token: same count
    refused = client.post(
        "/evaluate/", {"cluster": demo_snapshot.cluster_id, "manifest": pod_yaml("web-3")}
    )
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many evaluations" in refused.content.decode()
    assert PlacementDecision.objects.count() == 3
    assert evaluate(with_token(editor, "theirs"), demo_snapshot) == 201  # another user's count


def test_what_if_pages_and_api_share_one_count_per_user(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot, settings: Any
) -> None:
    settings.API_WHATIF_RATE = "1/minute"
    client.force_login(editor)
    form = {
        "cluster": demo_snapshot.cluster_id,
        "workload_source": "manifests",
        "workload": pod_yaml("w-1"),
        "baseline_source": "defaults",
        "candidate_source": "defaults",
    }
    assert client.post("/what-if/", form).status_code == 302
    refused = client.post("/what-if/", form)
    assert refused.status_code == 429 and "Too many what-if comparisons" in refused.content.decode()
    body = {
        "cluster": demo_snapshot.cluster_id,
        "workload": pod_yaml("w-2"),
        "baseline": {"source": "defaults"},
        "candidate": {"source": "defaults"},
    }
    assert with_token(editor, "t").post("/api/v1/what-if/", body, format="json").status_code == 429
    assert WhatIfRun.objects.count() == 1
