"""Real-world scheduler configurations through the API: import keeps the document as written
(apiVersion, every field, args schedboard does not model), render gives back every leaf, and an
edit made here changes exactly the field edited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User

from policy.models import SchedulerConfiguration
from scoring.config.dump import leaves
from tests.policy.policy_api import ARGS, CONFIGS, ok, patch

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parents[1] / "scoring" / "fixtures" / "scheduler-configs"
REAL = sorted(path.name for path in FIXTURES.glob("*.yaml"))


@pytest.fixture
def client(api_client: Any, editor: User) -> Any:
    api_client.force_login(editor)
    return api_client


@pytest.fixture
def cluster_id(demo_snapshot: Any) -> int:
    return int(demo_snapshot.cluster_id)


def _import(client: Any, cluster_id: int, text: str) -> dict[str, Any]:
    response = client.post(
        f"{CONFIGS}import/", {"cluster": cluster_id, "document": text}, format="json"
    )
    return ok(response, 201)


def _render(client: Any, configuration_id: int) -> Any:
    response = client.get(f"{CONFIGS}{configuration_id}/render/")
    assert response.status_code == 200, response.content[:2000]
    return yaml.safe_load(response.content.decode())


def test_fixtures_cover_every_config_version() -> None:
    versions = {yaml.safe_load((FIXTURES / name).read_text())["apiVersion"] for name in REAL}
    assert {v.rpartition("/")[2] for v in versions} == {"v1beta2", "v1beta3", "v1"}


@pytest.mark.parametrize("name", REAL)
def test_import_then_render_gives_back_every_leaf(client: Any, cluster_id: int, name: str) -> None:
    text = (FIXTURES / name).read_text()
    body = _import(client, cluster_id, text)
    written = yaml.safe_load(text)
    assert body["api_version"] == written["apiVersion"]
    assert leaves(_render(client, body["id"])) == leaves(written)


def test_editing_a_threshold_changes_only_that_field(client: Any, cluster_id: int) -> None:
    text = (FIXTURES / "koordinator-v1.5.0-v1beta3.yaml").read_text()
    body = _import(client, cluster_id, text)
    configuration = SchedulerConfiguration.objects.get(pk=body["id"])
    args = configuration.profiles.get(scheduler_name="koord-scheduler").loadaware_args
    before = leaves(_render(client, body["id"]))
    cpu = args.usage_thresholds["cpu"]
    patch(
        client,
        f"{ARGS}{args.pk}/",
        {"usage_thresholds": {**args.usage_thresholds, "cpu": cpu - 5}},
        f'W/"{args.version}"',
    )
    after = leaves(_render(client, body["id"]))
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    (path,) = changed
    assert path.endswith("args.usageThresholds.cpu") and after[path] == cpu - 5
    assert after["apiVersion"] == "kubescheduler.config.k8s.io/v1beta3"


def test_a_new_profile_setting_is_added_and_nothing_else(client: Any, cluster_id: int) -> None:
    text = (FIXTURES / "koordinator-v1.4.0-v1beta2.yaml").read_text()
    body = _import(client, cluster_id, text)
    before = leaves(_render(client, body["id"]))
    patch(client, f"{CONFIGS}{body['id']}/", {"parallelism": 8}, f'W/"{body["version"]}"')
    after = leaves(_render(client, body["id"]))
    assert after == {**before, "parallelism": 8}


def test_effective_shows_defaults_render_does_not(client: Any, cluster_id: int) -> None:
    text = (FIXTURES / "deckhouse-kubeadm-podtopologyspread-v1beta3.yaml").read_text()
    body = _import(client, cluster_id, text)
    rendered = _render(client, body["id"])
    effective = yaml.safe_load(client.get(f"{CONFIGS}{body['id']}/effective/").content.decode())
    assert "parallelism" not in rendered and effective["parallelism"] == 16
    assert rendered["apiVersion"].endswith("/v1beta3")
