"""One stored decision over the API: the engine's JSON as it was, its node list paged."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from scoring import decision_codec
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def evaluated(api_client: Any, snapshot: ClusterSnapshot, cpu: str = "6") -> dict[str, Any]:
    """The evaluate response with every node (``nodes_offset=0``): the engine's JSON plus ids."""
    pod = make_pod("web-1", containers=[make_container("app", {"cpu": cpu})])
    response = api_client.post(
        f"/api/v1/clusters/{snapshot.cluster_id}/evaluate/?nodes_offset=0",
        {"pod": pod},
        format="json",
    )
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def test_default_page_is_the_top_ranked_and_one_node_of_each_filtered_group(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, monkeypatch: Any
) -> None:
    monkeypatch.setattr(decision_codec, "DEFAULT_RANKED", 2)
    api_client.force_login(viewer)
    engine = evaluated(api_client, demo_snapshot)
    body = api_client.get(f"/api/v1/decisions/{engine['id']}/").json()
    explanation, page = body["explanation"], body["nodes_page"]
    # Every top-level field of the engine's JSON, in the same order; only the list is shorter.
    assert list(explanation) == [k for k in engine if k in explanation]
    assert {k: v for k, v in explanation.items() if k != "nodes"} == {
        k: engine[k] for k in explanation if k != "nodes"
    }
    nodes = engine["nodes"]
    ranked = [n for n in nodes if n["feasible"]]
    filtered = [n for n in nodes if not n["feasible"]]
    assert len(ranked) > 2 and len(filtered) > 1
    groups = page["filtered_groups"]
    examples = {g["example"] for g in groups}
    assert explanation["nodes"] == [n for n in nodes if n in ranked[:2] or n["name"] in examples]
    assert sum(g["count"] for g in groups) == len(filtered) == page["filtered"]
    for group in groups:
        example = next(n for n in filtered if n["name"] == group["example"])
        failing = [
            {"plugin": f["plugin"], "code": f["code"], "reason": f["reason"]}
            for f in example["filters"]
            if f["code"] != "Success"
        ]
        assert group["failures"] == failing
    assert page["total"] == len(nodes) == page["returned"] + page["omitted"]
    assert page["ranked"] == len(ranked) and page["offset"] is None and page["limit"] is None
    assert body["explanation"]["nodes"][0]["name"] == body["selected_node"]


def test_pages_of_nodes_add_up_to_the_engines_list(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    engine = evaluated(api_client, demo_snapshot)
    url = f"/api/v1/decisions/{engine['id']}/"
    pages = [
        api_client.get(url, {"nodes_offset": offset, "nodes_limit": 5}).json()
        for offset in range(0, engine["totalNodes"], 5)
    ]
    assert [n for page in pages for n in page["explanation"]["nodes"]] == engine["nodes"]
    last = pages[-1]["nodes_page"]
    assert (last["offset"], last["limit"], last["returned"]) == (10, 5, 2)
    assert last["omitted"] == engine["totalNodes"] - 2
    everything = api_client.get(url, {"nodes_offset": 0}).json()
    assert everything["explanation"] == {k: v for k, v in engine.items() if k in engine_keys()}
    beyond = api_client.get(url, {"nodes_offset": 99}).json()
    assert beyond["explanation"]["nodes"] == [] and beyond["nodes_page"]["omitted"] == 12


def engine_keys() -> set[str]:
    return {
        "pod",
        "profile",
        "selectedNode",
        "feasibleNodes",
        "totalNodes",
        "nodes",
        "skippedPlugins",
        "rankingMayDiffer",
        "rankingMayDifferBecause",
        "preScoreSkipped",
        "message",
        "error",
    }


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"nodes_offset": "-1"}, "nodes_offset"),
        ({"nodes_offset": "x"}, "nodes_offset"),
        ({"nodes_limit": "0"}, "nodes_limit"),
        ({"nodes_limit": "1001"}, "nodes_limit"),
        ({"nodes_limit": "1.5"}, "nodes_limit"),
    ],
)
def test_bad_paging_is_a_400_naming_the_parameter(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, query: Any, field: str
) -> None:
    api_client.force_login(viewer)
    engine = evaluated(api_client, demo_snapshot)
    response = api_client.get(f"/api/v1/decisions/{engine['id']}/", query)
    assert response.status_code == 400 and field in response.json()


def test_an_unschedulable_pods_decision_lists_its_groups(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    engine = evaluated(api_client, demo_snapshot, cpu="1000")
    body = api_client.get(f"/api/v1/decisions/{engine['id']}/").json()
    assert body["explanation"]["message"] == engine["message"]
    page = body["nodes_page"]
    assert page["ranked"] == 0 and page["filtered"] == 12
    assert [n["name"] for n in body["explanation"]["nodes"]] == sorted(
        g["example"] for g in page["filtered_groups"]
    )
