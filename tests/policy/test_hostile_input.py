"""Hostile documents get a 4xx naming the limit, at every entry point, and nothing is stored:
YAML alias bombs, nesting deeper than any Kubernetes object, values a database cannot store,
quantities beyond what the scheduler counts, negative requests and invalid names."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import Cluster, ClusterSnapshot
from policy.decisions.models import PlacementDecision, WhatIfRun
from policy.policies.models import SchedulerConfiguration
from scoring.inputs import MAX_DEPTH, InputLimitError, load_yaml
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def alias_bomb(levels: int = 9) -> str:
    """About 600 characters that expand to 9**levels values once built."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


BOMB = alias_bomb()
DEEP_YAML = "[" * 100_000
DEEP_JSON = b"[" * 100_000


def pod_with(resources: dict[str, str], name: str = "web-1", **meta: Any) -> dict[str, Any]:
    pod = make_pod(name, containers=[make_container("app", resources)])
    pod["metadata"].update(meta)
    return pod


def evaluate(api_client: Any, snapshot: ClusterSnapshot, pod: Any) -> Any:
    """POST the pod as JSON text with non-ASCII escaped (a lone surrogate is only sendable so)."""
    url = f"/api/v1/clusters/{snapshot.cluster_id}/evaluate/"
    return api_client.post(url, json.dumps({"pod": pod}), content_type="application/json")


def test_the_shared_loader_refuses_a_bomb_at_once_and_reads_ordinary_aliases() -> None:
    # Refused before it is built: built, the bomb is 9**9 values and would not finish.
    with pytest.raises(InputLimitError, match="alias bomb"):
        load_yaml(BOMB)
    with pytest.raises(InputLimitError, match="refers to a node that contains it"):
        load_yaml("&a [*a]")
    with pytest.raises(InputLimitError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_yaml("x: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    merged = load_yaml("base: &b {cpu: 1}\nuse: {<<: *b, memory: 2}")
    assert merged["use"] == {"cpu": 1, "memory": 2}


@pytest.mark.parametrize(
    "pod",
    [BOMB, DEEP_YAML, "metadata: {name: " + "[" * 70 + "]" * 70 + "}"],
    ids=["alias-bomb", "deep", "deep-inside"],
)
def test_evaluate_refuses_hostile_yaml(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, pod: str
) -> None:
    api_client.force_login(viewer)
    response = evaluate(api_client, demo_snapshot, pod)
    assert response.status_code == 400, response.content[:500]
    [error] = response.json()["errors"]
    assert error["field"] == "pod" and "refused" in error["detail"]
    assert not PlacementDecision.objects.exists()


def test_deep_json_is_a_400_on_any_endpoint(api_client: Any, editor: User) -> None:
    api_client.force_login(editor)
    for url in ("/api/v1/scheduler-configurations/", "/api/v1/node-threshold-policies/"):
        response = api_client.post(url, DEEP_JSON, content_type="application/json")
        assert response.status_code == 400, (url, response.content[:300])
        assert "nested too deeply" in json.dumps(response.json())


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (pod_with({"cpu": "1e400"}), "requests.cpu: 1e400 is more than the scheduler can count"),
        (pod_with({"memory": "-1Gi"}), "requests.memory: must be greater than or equal to 0"),
        (pod_with({"cpu": "1"}, name="Web_1"), "metadata.name: Invalid value: 'Web_1'"),
        (pod_with({"cpu": "1"}, namespace="a.b"), "metadata.namespace: Invalid value: 'a.b'"),
        (pod_with({"cpu": "1"}, labels={"app": "a\x00b"}), "NUL characters are not allowed"),
        (pod_with({"cpu": "1"}, labels={"app": "\ud800"}), "lone surrogate"),
    ],
    ids=["huge", "negative", "name", "namespace", "nul", "surrogate"],
)
def test_evaluate_refuses_what_the_api_server_would(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, pod: Any, message: str
) -> None:
    api_client.force_login(viewer)
    response = evaluate(api_client, demo_snapshot, pod)
    assert response.status_code == 400, response.content[:500]
    assert message in json.dumps(response.json(), ensure_ascii=False), response.json()
    assert not PlacementDecision.objects.exists()


def test_import_and_what_if_refuse_a_bomb(
    api_client: Any, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    cluster = demo_snapshot.cluster_id
    response = api_client.post(
        "/api/v1/scheduler-configurations/import/",
        {"cluster": cluster, "document": BOMB},
        format="json",
    )
    assert response.status_code == 400 and "alias bomb" in json.dumps(response.json())
    assert not SchedulerConfiguration.objects.exists()
    for side in ("workload", "candidate"):
        body: dict[str, Any] = {
            "cluster": cluster,
            "workload": yaml.safe_dump(pod_with({"cpu": "1"})),
            "baseline": {"source": "defaults"},
            "candidate": {"source": "defaults"},
        }
        if side == "workload":
            body["workload"] = BOMB
        else:
            body["candidate"] = {"source": "custom", "yaml": BOMB}
        response = api_client.post("/api/v1/what-if/", body, format="json")
        assert response.status_code == 400, (side, response.content[:300])
        assert "alias bomb" in json.dumps(response.json())
    assert not WhatIfRun.objects.exists()


def test_a_policy_form_refuses_a_bomb(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    response = client.post(
        f"/policies/thresholds/new/?parent={demo_snapshot.cluster_id}",
        {
            "name": "bomb",
            "node_names": "general-a-0001",
            "usage_thresholds": BOMB,
        },
    )
    assert response.status_code in (200, 400)
    [message] = response.context["form"].errors["usage_thresholds"]
    assert "alias bomb" in message


def test_the_cli_refuses_a_bomb(tmp_path: Any) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(BOMB)
    result = subprocess.run(
        [sys.executable, "-m", "scoring", "validate", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "alias bomb" in result.stdout + result.stderr


@pytest.mark.parametrize(
    "query",
    [
        "?cluster=²",
        "?cluster=99999999999999999999999",
        "?cluster=1&per_page=²",
        "?cluster=1&band=cpu:²-3",
        "?cluster=1&snapshot=٣",
    ],
)
def test_odd_digits_in_page_parameters_are_never_a_500(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot, query: str
) -> None:
    client.force_login(viewer)
    for page in ("/", "/decisions/", "/evaluate/"):
        response = client.get(
            page + query.replace("cluster=1", f"cluster={demo_snapshot.cluster_id}")
        )
        assert response.status_code in (200, 404), (page, query, response.status_code)


@pytest.mark.parametrize(
    "at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "2026-13-01T00:00Z"]
)
def test_an_unshowable_time_is_a_400_naming_at(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot, at: str
) -> None:
    api_client.force_login(viewer)
    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/node-thresholds/render/"
    response = api_client.get(url, {"at": at})
    assert response.status_code == 400, response.content[:300]
    assert "at" in json.dumps(response.json())
    assert api_client.get(url, {"at": "2026-11-01T23:00Z"}).status_code == 200


def test_a_page_upload_over_the_limit_is_refused_before_it_is_read(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024
    client.force_login(viewer)
    manifest = io.BytesIO(b"#" * (128 * 1024))
    manifest.name = "pod.yaml"
    response = client.post(f"/evaluate/?cluster={demo_snapshot.cluster_id}", {"upload": manifest})
    assert response.status_code == 413
    assert b"Request body too large" in response.content
    assert not PlacementDecision.objects.exists()


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\x01binary\x00",  # not YAML at all
        b"root:x:0:0:root:/root:/bin/bash\n",  # YAML, not a mapping
        b"contexts: [web, db]\ncurrent-context: web\n",  # a mapping of the wrong shape
        b"{}\n",
    ],
)
def test_a_file_that_is_not_a_kubeconfig_is_a_400_naming_the_path(
    api_client: Any, superuser: User, tmp_path: Any, content: bytes
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    api_client.force_login(superuser)
    body = {"name": "odd", "kind": "kubeconfig", "kubeconfig_path": str(path)}
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 400, response.content
    [error] = response.json()["kubeconfig_path"]
    assert "is it a kubeconfig file?" in error and str(path) in error
    body["kubeconfig_path"] = str(tmp_path)  # a directory
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert "is not a file" in response.json()["kubeconfig_path"][0]
    assert not Cluster.objects.filter(name="odd").exists()


def test_a_hostile_scheduler_configmap_is_not_the_same_document_and_costs_nothing() -> None:
    """The live ConfigMap's text is compared with what schedboard would write (dry-run, drift):
    an alias bomb in it is refused by the loader's limits, not expanded."""
    from policy.clusters.gateway.apply import same_document

    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}]\n"
        for i in range(9)
    )
    assert same_document(bomb, "a: 1\n") is False  # expanded, it would be 3.5 billion items
    assert same_document("a: 1 # note\n", "{a: 1}") is True
