"""Real-world scheduler configurations through the API: import keeps the document as written
(apiVersion, every field, args schedboard does not model), render gives back every leaf, and an
edit made here changes exactly the field edited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User

from policy.policies.models import SchedulerConfiguration
from scoring.config.dump import leaves
from tests.policy.policy_api import ARGS, CONFIGS, ok, patch
from tests.scoring.builders import make_container, make_pod

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


CLUSTERS = "/api/v1/clusters/"


def _set_target(client: Any, cluster_id: int, flavor: str, version: str, status: int = 200) -> Any:
    etag = client.get(f"{CLUSTERS}{cluster_id}/")["ETag"]
    return patch(
        client,
        f"{CLUSTERS}{cluster_id}/",
        {"scheduler_flavor": flavor, "scheduler_version": version},
        etag,
        status,
    )


@pytest.fixture
def operator_client(api_client: Any, operator: User) -> Any:
    api_client.force_login(operator)
    return api_client


def test_operators_set_the_scheduler_target(operator_client: Any, cluster_id: int) -> None:
    body = _set_target(operator_client, cluster_id, "koord-scheduler", "v1.7.2")
    assert body["scheduler_target"] == "koord-scheduler@1.7"
    assert body["detected_scheduler_target"] == ""
    refused = _set_target(operator_client, cluster_id, "koord-scheduler", "seven", 400)
    assert "scheduler_version" in str(refused)
    refused = _set_target(operator_client, cluster_id, "", "1.28", 400)
    assert "scheduler_version" in str(refused)
    cleared = _set_target(operator_client, cluster_id, "", "")
    assert cleared["scheduler_target"] is None


def test_the_target_decides_the_rendered_api_version(
    client: Any, cluster_id: int, operator: User
) -> None:
    text = (FIXTURES / "deckhouse-kubeadm-podtopologyspread-v1beta3.yaml").read_text()
    body = _import(client, cluster_id, text)
    assert _render(client, body["id"])["apiVersion"].endswith("/v1beta3")
    client.force_login(operator)
    _set_target(client, cluster_id, "kube-scheduler", "1.30")  # reads v1 only
    rendered = _render(client, body["id"])
    assert rendered["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    written = yaml.safe_load(text)
    assert leaves({**rendered, "apiVersion": written["apiVersion"]}) == leaves(written)


def test_the_target_decides_the_registry(client: Any, cluster_id: int, operator: User) -> None:
    # Koordinator's 1.5.0 chart lists Coscheduling at queueSort: koord-scheduler 1.7 has no
    # such QueueSort plugin and would not start (docs/scheduler-targets.md).
    text = (FIXTURES / "koordinator-v1.5.0-v1beta3.yaml").read_text()
    _import(client, cluster_id, text)  # inferred: koord-scheduler@1.6
    client.force_login(operator)
    _set_target(client, cluster_id, "koord-scheduler", "1.7")
    configuration = SchedulerConfiguration.objects.get(cluster_id=cluster_id)
    response = client.get(f"{CONFIGS}{configuration.pk}/render/")
    assert response.status_code == 400
    assert "Coscheduling" in response.content.decode()
    pod = make_pod("koord-1", containers=[make_container("app", {"cpu": "100m"})])
    pod["spec"]["schedulerName"] = "koord-scheduler"
    evaluated = client.post(f"/api/v1/clusters/{cluster_id}/evaluate/", {"pod": pod}, format="json")
    assert evaluated.status_code == 400 and "Coscheduling" in evaluated.content.decode()


@pytest.mark.parametrize("name", ["koordinator-v1.5.0-v1beta3.yaml", "koordinator-v1.7.0-v1.yaml"])
def test_evaluating_with_koordinators_chart_configuration(
    client: Any, cluster_id: int, name: str
) -> None:
    _import(client, cluster_id, (FIXTURES / name).read_text())
    pod = make_pod("koord-1", containers=[make_container("app", {"cpu": "100m"})])
    pod["spec"]["schedulerName"] = "koord-scheduler"
    response = client.post(f"/api/v1/clusters/{cluster_id}/evaluate/", {"pod": pod}, format="json")
    assert response.status_code == 201, response.content[:2000]
    body = response.json()
    assert body["profile"] == "koord-scheduler"
    skipped = {entry["plugin"] for entry in body["skippedPlugins"]}
    assert "Reservation" in skipped and "LoadAwareScheduling" not in skipped


def test_switching_profiling_off_is_written(client: Any, cluster_id: int) -> None:
    text = (FIXTURES / "kubernetes-docs-multiple-profiles-v1.yaml").read_text()
    body = _import(client, cluster_id, text)
    patch(client, f"{CONFIGS}{body['id']}/", {"enable_profiling": False}, f'W/"{body["version"]}"')
    rendered = _render(client, body["id"])
    assert rendered["enableProfiling"] is False
    assert leaves(rendered) == {**leaves(yaml.safe_load(text)), "enableProfiling": False}


CUSTOM_PLUGIN = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom
  plugins:
    filter:
      enabled:
      - name: CustomFilter
"""


def test_unknown_names_are_warnings_for_a_custom_build_errors_for_kube_scheduler(
    client: Any, cluster_id: int, operator: User, editor: User
) -> None:
    refused = client.post(
        f"{CONFIGS}import/", {"cluster": cluster_id, "document": CUSTOM_PLUGIN}, format="json"
    )
    assert refused.status_code == 400 and "CustomFilter" in refused.content.decode()
    client.force_login(operator)
    _set_target(client, cluster_id, "custom", "1.30")
    client.force_login(editor)
    body = _import(client, cluster_id, CUSTOM_PLUGIN)
    check = ok(client.get(f"{CONFIGS}{body['id']}/check/"))
    assert check["valid"] is True and check["target"] == "custom@1.30"
    (warning,) = check["warnings"]
    assert warning["field"] == "profiles[0].plugins.filter.enabled[0]"
    assert "CustomFilter" in warning["detail"]
    assert leaves(_render(client, body["id"])) == leaves(yaml.safe_load(CUSTOM_PLUGIN))
