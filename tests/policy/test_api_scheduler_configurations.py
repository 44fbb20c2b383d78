"""Scheduler configurations, profiles and LoadAware args through the API: CRUD, ETags,
validation by the engine with errors on API fields, rendering, import/export, history."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User

from policy.accounts.changes import ChangeContext
from policy.accounts.models import PolicyChange
from policy.clusters.models import Cluster
from policy.policies import services as policies
from policy.policies.models import SchedulerConfiguration
from scoring.config import dump_configuration, load_configuration
from tests.policy.policy_api import (
    ARGS,
    CONFIGS,
    LOADAWARE_PLUGINS,
    PROFILES,
    fields_of,
    make_configuration,
    make_profile,
    ok,
    patch,
    post,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(api_client: Any, editor: User) -> Any:
    api_client.force_login(editor)
    return api_client


@pytest.fixture
def cluster_id(demo_snapshot: Any) -> int:
    return int(demo_snapshot.cluster_id)


@pytest.fixture
def configuration(client: Any, cluster_id: int) -> dict[str, Any]:
    return make_configuration(client, cluster_id)


def test_create_read_and_etag(client: Any, cluster_id: int) -> None:
    response = client.post(CONFIGS, {"cluster": cluster_id, "parallelism": 8}, format="json")
    body = ok(response, 201)
    assert response["ETag"] == 'W/"1"' and body["version"] == 1
    detail = client.get(f"{CONFIGS}{body['id']}/")
    assert detail["ETag"] == 'W/"1"' and detail.json()["parallelism"] == 8
    again = client.post(CONFIGS, {"cluster": cluster_id}, format="json")
    assert again.status_code == 400 and "cluster" in again.json()


def test_version_and_document_follow_profiles_and_args(
    client: Any, configuration: dict[str, Any]
) -> None:
    cid = configuration["id"]
    profile = make_profile(client, cid, "load-aware", plugins=LOADAWARE_PLUGINS)
    args = post(client, ARGS, {"profile": profile["id"], "usage_thresholds": {"cpu": 70}})
    assert args["effective"]["usageThresholds"] == {"cpu": 70}
    assert args["effective"]["estimatedScalingFactors"] == {"cpu": 85, "memory": 70}
    stored = SchedulerConfiguration.objects.get(pk=cid)
    assert stored.version == 3  # created, profile added, args added
    document = stored.to_document()
    (entry,) = document["profiles"]
    assert entry["schedulerName"] == "load-aware"
    assert entry["pluginConfig"] == [
        {
            "name": "LoadAwareScheduling",
            "args": {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "LoadAwareSchedulingArgs",
                "usageThresholds": {"cpu": 70},
            },
        }
    ]
    assert ok(client.get(f"{CONFIGS}{cid}/document/")) == document
    patch(client, f"{ARGS}{args['id']}/", {"dominant_resource_weight": 10}, 'W/"1"')
    stored.refresh_from_db()
    assert stored.version == 4


def test_writes_need_a_current_if_match(client: Any, configuration: dict[str, Any]) -> None:
    url = f"{CONFIGS}{configuration['id']}/"
    missing = client.patch(url, {"parallelism": 4}, format="json")
    assert missing.status_code == 428 and "If-Match" in missing.json()["detail"]
    stale = client.patch(url, {"parallelism": 4}, format="json", HTTP_IF_MATCH='W/"9"')
    assert stale.status_code == 412 and 'W/"1"' in stale.json()["detail"]
    garbage = client.patch(url, {"parallelism": 4}, format="json", HTTP_IF_MATCH="nonsense")
    assert garbage.status_code == 412
    response = client.patch(url, {"parallelism": 4}, format="json", HTTP_IF_MATCH='W/"1"')
    assert response.status_code == 200 and response["ETag"] == 'W/"2"'
    strong = client.put(
        url,
        {"cluster": configuration["cluster"], "parallelism": 6},
        format="json",
        HTTP_IF_MATCH='"2"',
    )
    assert strong.status_code == 200 and strong.json()["parallelism"] == 6
    anything = client.patch(url, {"parallelism": 5}, format="json", HTTP_IF_MATCH="*")
    assert anything.status_code == 200 and anything["ETag"] == 'W/"4"'
    assert client.delete(url).status_code == 428
    assert client.delete(url, HTTP_IF_MATCH='W/"3"').status_code == 412
    assert client.delete(url, HTTP_IF_MATCH='W/"4"').status_code == 204
    assert client.get(url).status_code == 404


def test_bad_threshold_is_a_400_on_the_args_field(
    client: Any, configuration: dict[str, Any]
) -> None:
    profile = make_profile(client, configuration["id"], "a", plugins=LOADAWARE_PLUGINS)
    body = post(client, ARGS, {"profile": profile["id"], "usage_thresholds": {"cpu": 150}}, 400)
    assert body["errors"] == [
        {
            "field": "usage_thresholds",
            "type": "FieldValueInvalid",
            "detail": "resource Threshold of cpu should be less than 100, got 150",
        }
    ]
    assert body["usage_thresholds"] == [body["errors"][0]["detail"]]
    body = post(
        client,
        ARGS,
        {
            "profile": profile["id"],
            "node_metric_expiration_seconds": 0,
            "aggregated_usage_aggregated_duration": "-5m",
            "resource_weights": {"gpu": 5},
        },
        400,
    )
    assert fields_of(body) == {
        "node_metric_expiration_seconds": "FieldValueInvalid",
        "aggregated_usage_aggregated_duration": "FieldValueInvalid",
        "estimated_scaling_factors": "FieldValueNotFound",
    }
    assert not SchedulerConfiguration.objects.get(pk=configuration["id"]).profiles.get().version > 1


def test_unknown_plugin_and_wrong_extension_point(
    client: Any, configuration: dict[str, Any]
) -> None:
    plugins = {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}
    body = post(client, PROFILES, {"configuration": configuration["id"], "plugins": plugins}, 400)
    assert body["errors"] == [
        {
            "field": "plugins.filter.enabled[0]",
            "type": "FieldValueInvalid",
            "detail": 'FilterPlugin "NoSuchPlugin" does not exist',
        }
    ]
    assert list(body) == ["errors", "plugins"]
    misplaced = {"bind": {"enabled": [{"name": "NodeName"}]}}
    body = post(client, PROFILES, {"configuration": configuration["id"], "plugins": misplaced}, 400)
    assert "does not extend BindPlugin" in body["plugins"][0]


def test_duplicate_scheduler_name_on_the_changed_profile(
    client: Any, configuration: dict[str, Any]
) -> None:
    first = make_profile(client, configuration["id"], "a")
    second = make_profile(client, configuration["id"], "b")
    body = post(
        client, PROFILES, {"configuration": configuration["id"], "scheduler_name": "a"}, 400
    )
    assert fields_of(body) == {"scheduler_name": "FieldValueDuplicate"}
    # Renaming the first profile makes the engine report the second (later) one: the message
    # still lands on the field this request changed.
    body = patch(client, f"{PROFILES}{first['id']}/", {"scheduler_name": "b"}, 'W/"1"', 400)
    assert body["errors"][0]["field"] == "profiles[1].scheduler_name"
    assert "Duplicate value" in body["scheduler_name"][0]
    assert ok(client.get(f"{PROFILES}{second['id']}/"))["scheduler_name"] == "b"
    assert ok(client.get(f"{PROFILES}{first['id']}/"))["scheduler_name"] == "a"


def test_queue_sort_must_match_across_profiles(client: Any, configuration: dict[str, Any]) -> None:
    make_profile(client, configuration["id"], "a")
    custom = {"queueSort": {"disabled": [{"name": "*"}]}}
    body = post(
        client,
        PROFILES,
        {"configuration": configuration["id"], "scheduler_name": "b", "plugins": custom},
        400,
    )
    assert body["errors"][0] == {
        "field": "plugins.queueSort",
        "type": "FieldValueInvalid",
        "detail": "must be the same for all profiles",
    }


def test_global_fields_and_type_errors(client: Any, configuration: dict[str, Any]) -> None:
    url = f"{CONFIGS}{configuration['id']}/"
    body = patch(client, url, {"parallelism": 0, "pod_max_backoff_seconds": 0}, 'W/"1"', 400)
    assert fields_of(body) == {
        "parallelism": "FieldValueInvalid",
        "pod_max_backoff_seconds": "FieldValueInvalid",
    }
    body = patch(client, url, {"leader_election": {"leaseDuration": 5}}, 'W/"1"', 400)
    assert body["errors"][0]["field"] == "leader_election.leaseDuration"
    assert body["errors"][0]["type"] == "FieldValueTypeInvalid"
    body = patch(client, url, {"leader_election": {"bogus": True}}, 'W/"1"', 400)
    assert body["errors"][0]["field"] == "leader_election.bogus"
    body = patch(client, url, {"parallelism": 2**40}, 'W/"1"', 400)
    assert fields_of(body) == {"parallelism": "FieldValueInvalid"}


def test_plugin_config_args_errors_and_loadaware_entry(
    client: Any, configuration: dict[str, Any]
) -> None:
    fit = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Nope"}}}
    body = post(
        client,
        PROFILES,
        {"configuration": configuration["id"], "scheduler_name": "a", "plugin_config": [fit]},
        400,
    )
    assert body["errors"][0]["field"] == "plugin_config[0].args.scoringStrategy.type"
    loadaware = {"name": "LoadAwareScheduling", "args": {}}
    body = post(
        client,
        PROFILES,
        {"configuration": configuration["id"], "plugin_config": [loadaware]},
        400,
    )
    assert "loadaware-args" in body["plugin_config"][0]
    strict = {"filter": {"enabled": [{"name": "NodeName", "wieght": 1}]}}
    body = post(client, PROFILES, {"configuration": configuration["id"], "plugins": strict}, 400)
    assert body["errors"][0]["field"] == "plugins.filter.enabled[0].wieght"


def test_render_is_what_was_set_and_effective_the_engine_dump(
    client: Any, configuration: dict[str, Any]
) -> None:
    profile = make_profile(client, configuration["id"], "load-aware", plugins=LOADAWARE_PLUGINS)
    post(client, ARGS, {"profile": profile["id"], "usage_thresholds": {"cpu": 70}})
    response = client.get(f"{CONFIGS}{configuration['id']}/render/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/yaml")
    text = response.content.decode()
    document = SchedulerConfiguration.objects.get(pk=configuration["id"]).to_document()
    assert yaml.safe_load(text) == document  # no default written
    (entry,) = yaml.safe_load(text)["profiles"]
    args = next(c for c in entry["pluginConfig"] if c["name"] == "LoadAwareScheduling")["args"]
    assert args["usageThresholds"] == {"cpu": 70} and "nodeMetricExpirationSeconds" not in args
    effective = client.get(f"{CONFIGS}{configuration['id']}/effective/").content.decode()
    assert effective == dump_configuration(load_configuration(document))
    (entry,) = yaml.safe_load(effective)["profiles"]
    args = next(c for c in entry["pluginConfig"] if c["name"] == "LoadAwareScheduling")["args"]
    assert args["nodeMetricExpirationSeconds"] == 180
    missing = client.get(f"{CONFIGS}999999/render/")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/json"


IMPORTED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 32
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
- schedulerName: koord-scheduler
  percentageOfNodesToScore: 40
  plugins:
    multiPoint:
      enabled:
      - name: LoadAwareScheduling
        weight: 3
    score:
      disabled:
      - name: ImageLocality
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 2
  - name: LoadAwareScheduling
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: LoadAwareSchedulingArgs
      filterExpiredNodeMetrics: false
      nodeMetricExpirationSeconds: 300
      usageThresholds:
        cpu: 75
        memory: 85
      dominantResourceWeight: 5
      estimatedScalingFactors:
        cpu: 90
      aggregated:
        usageThresholds:
          cpu: 70
        usageAggregationType: p95
        usageAggregatedDuration: 5m
  - name: SomeoneElsesPlugin
    args:
      anything: [1, 2, {"deep": true}]
"""


def test_import_creates_and_export_is_lossless(client: Any, cluster_id: int) -> None:
    response = client.post(
        f"{CONFIGS}import/", {"cluster": cluster_id, "document": IMPORTED}, format="json"
    )
    body = ok(response, 201)
    assert response["ETag"] == 'W/"1"'
    assert [p["scheduler_name"] for p in body["profiles"]] == [
        "default-scheduler",
        "koord-scheduler",
    ]
    stored = SchedulerConfiguration.objects.get(pk=body["id"])
    assert stored.to_document() == yaml.safe_load(IMPORTED)
    text = client.get(f"{CONFIGS}{body['id']}/render/").content.decode()
    assert yaml.safe_load(text) == yaml.safe_load(IMPORTED)  # as written, no default added
    args = stored.profiles.get(scheduler_name="koord-scheduler").loadaware_args
    assert args.usage_thresholds == {"cpu": 75, "memory": 85}
    assert args.aggregated_usage_aggregated_duration == "5m"
    assert args.plugin_config_index == 1
    # Export, import the export: the same document again.
    exported = client.get(f"{CONFIGS}{body['id']}/document/").json()
    again = client.post(
        f"{CONFIGS}import/",
        {"cluster": cluster_id, "document": yaml.safe_dump(exported)},
        format="json",
        HTTP_IF_MATCH='W/"1"',
    )
    assert ok(again)["version"] == 1  # nothing changed
    assert stored.profiles.count() == 2


def test_import_replaces_with_if_match(client: Any, cluster_id: int) -> None:
    first = post(client, f"{CONFIGS}import/", {"cluster": cluster_id, "document": IMPORTED})
    keep_id = next(p["id"] for p in first["profiles"] if p["scheduler_name"] == "koord-scheduler")
    replacement = IMPORTED.replace("parallelism: 32", "parallelism: 8").replace(
        "- schedulerName: default-scheduler\n", ""
    )
    data = {"cluster": cluster_id, "document": replacement}
    assert client.post(f"{CONFIGS}import/", data, format="json").status_code == 428
    stale = client.post(f"{CONFIGS}import/", data, format="json", HTTP_IF_MATCH='W/"7"')
    assert stale.status_code == 412
    confirmed = {**data, "delete_profiles": ["default-scheduler"]}  # the profile it drops
    body = post(client, f"{CONFIGS}import/", confirmed, 200, HTTP_IF_MATCH='W/"1"')
    assert body["parallelism"] == 8 and body["version"] == 2
    assert [p["id"] for p in body["profiles"]] == [keep_id]  # matched by schedulerName
    change = PolicyChange.objects.filter(object_id=body["id"], action="import").first()
    assert change is not None and change.user_name == "eddie"


@pytest.mark.parametrize(
    ("document", "field", "kind"),
    [
        (
            IMPORTED.replace("cpu: 75", "cpu: 175"),
            "profiles[1].pluginConfig[1].args.usageThresholds",
            "FieldValueInvalid",
        ),
        (
            IMPORTED.replace("SomeoneElsesPlugin", "LoadAwareScheduling"),
            "profiles[1].pluginConfig[2]",
            "FieldValueDuplicate",
        ),
        (
            IMPORTED.replace("parallelism: 32", "parallelism: true"),
            "parallelism",
            "FieldValueTypeInvalid",
        ),
        (
            IMPORTED.replace("kind: KubeSchedulerConfiguration", "kind: Pod"),
            "",
            "FieldValueInvalid",
        ),
        ("{not yaml: [", "", "FieldValueInvalid"),
        ("", "document", "FieldValueRequired"),
    ],
)
def test_import_errors_name_document_paths(
    client: Any, cluster_id: int, document: str, field: str, kind: str
) -> None:
    body = post(client, f"{CONFIGS}import/", {"cluster": cluster_id, "document": document}, 400)
    assert (body["errors"][0]["field"], body["errors"][0]["type"]) == (field, kind)
    assert body["document"]
    assert not SchedulerConfiguration.objects.exists()


def test_history_and_revert_of_a_configuration(client: Any, cluster_id: int) -> None:
    created = post(client, f"{CONFIGS}import/", {"cluster": cluster_id, "document": IMPORTED})
    cid = created["id"]
    koord = next(p for p in created["profiles"] if p["scheduler_name"] == "koord-scheduler")
    patch(client, f"{PROFILES}{koord['id']}/", {"percentage_of_nodes_to_score": 10}, 'W/"1"')
    extra = make_profile(client, cid, "batch")
    history = ok(client.get(f"{CONFIGS}{cid}/history/"))
    assert [c["version"] for c in history["results"]] == [3, 2, 1]
    assert history["results"][0]["message"] == "profile batch created"
    assert "+- schedulerName: batch" in history["results"][0]["document_diff"]
    assert (
        history["results"][1]["diff"]["profiles"]["before"]
        != (history["results"][1]["diff"]["profiles"]["after"])
    )
    response = client.post(
        f"{CONFIGS}{cid}/revert/", {"version": 1}, format="json", HTTP_IF_MATCH='W/"3"'
    )
    body = ok(response)
    assert response["ETag"] == 'W/"4"'
    assert {p["scheduler_name"] for p in body["profiles"]} == {
        "default-scheduler",
        "koord-scheduler",
    }
    assert client.get(f"{PROFILES}{extra['id']}/").status_code == 404
    reverted = ok(client.get(f"{PROFILES}{koord['id']}/"))
    assert reverted["percentage_of_nodes_to_score"] == 40 and reverted["version"] == 3
    stored = SchedulerConfiguration.objects.get(pk=cid)
    assert stored.to_document() == yaml.safe_load(IMPORTED)
    latest = ok(client.get(f"{CONFIGS}{cid}/history/"))["results"][0]
    assert latest["action"] == "revert" and latest["message"] == "reverted to version 1"
    unknown = client.post(
        f"{CONFIGS}{cid}/revert/", {"version": 99}, format="json", HTTP_IF_MATCH="*"
    )
    assert unknown.status_code == 400 and "version" in unknown.json()
    assert client.post(f"{CONFIGS}{cid}/revert/", {"version": 1}, format="json").status_code == 428


def test_profile_revert_and_delete(client: Any, configuration: dict[str, Any]) -> None:
    cid = configuration["id"]
    profile = make_profile(client, cid, "a", plugins=LOADAWARE_PLUGINS)
    url = f"{PROFILES}{profile['id']}/"
    patch(client, url, {"scheduler_name": "renamed"}, 'W/"1"')
    history = ok(client.get(f"{url}history/"))
    assert history["results"][0]["diff"] == {"scheduler_name": {"before": "a", "after": "renamed"}}
    body = post(client, f"{url}revert/", {"version": 1}, 200, HTTP_IF_MATCH='W/"2"')
    assert body["scheduler_name"] == "a" and body["version"] == 3
    assert client.delete(url, HTTP_IF_MATCH='W/"3"').status_code == 204
    assert SchedulerConfiguration.objects.get(pk=cid).version == 5
    assert not SchedulerConfiguration.objects.get(pk=cid).profiles.exists()


def test_changes_record_who_and_how(client: Any, configuration: dict[str, Any]) -> None:
    response = client.patch(
        f"{CONFIGS}{configuration['id']}/",
        {"description": "tuned"},
        format="json",
        HTTP_IF_MATCH='W/"1"',
        HTTP_X_REQUEST_ID="5f0c7c1e-3f5e-4c39-9a53-6f3f1f0f5f01",
    )
    assert response.status_code == 200
    assert response["X-Request-ID"] == "5f0c7c1e-3f5e-4c39-9a53-6f3f1f0f5f01"
    change = PolicyChange.objects.filter(action="update").get()
    assert change.user_name == "eddie" and change.source == "api"
    assert str(change.request_id) == "5f0c7c1e-3f5e-4c39-9a53-6f3f1f0f5f01"
    assert change.remote_addr == "127.0.0.1"
    assert change.prechange_data["description"] == ""
    assert change.postchange_data["description"] == "tuned"
    listed = ok(client.get("/api/v1/policy-changes/?action=update"))
    assert [c["id"] for c in listed["results"]] == [change.pk]
    assert (
        ok(client.get("/api/v1/policy-changes/?object_type=schedulerconfiguration"))["count"] == 2
    )


def test_automatic_push_queues_a_sync(
    client: Any,
    configuration: dict[str, Any],
    celery_eager: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from policy.clusters.models import Cluster

    Cluster.objects.filter(pk=configuration["cluster"]).update(push_mode="automatic")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        patch(client, f"{CONFIGS}{configuration['id']}/", {"parallelism": 4}, 'W/"1"')
    assert len(syncs(callbacks)) == 1
    Cluster.objects.filter(pk=configuration["cluster"]).update(push_mode="manual")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        patch(client, f"{CONFIGS}{configuration['id']}/", {"parallelism": 5}, 'W/"2"')
    assert syncs(callbacks) == []


def syncs(callbacks: list[Any]) -> list[Any]:
    """The on-commit callbacks other than preparing the cluster's views (policy.web.prepared)."""
    from policy.core import broker

    return [c for c in callbacks if getattr(c, "args", (None,))[0] != broker.PREPARE_SNAPSHOT]


def test_filters_ordering_and_pagination(client: Any, configuration: dict[str, Any]) -> None:
    for name in ("b", "a", "c"):
        make_profile(client, configuration["id"], name)
    names = [
        p["scheduler_name"]
        for p in ok(client.get(f"{PROFILES}?ordering=scheduler_name"))["results"]
    ]
    assert names == ["a", "b", "c"]
    assert ok(client.get(f"{PROFILES}?scheduler_name=b"))["count"] == 1
    assert ok(client.get(f"{PROFILES}?cluster={configuration['cluster']}&limit=2"))["next"]
    assert client.get(f"{PROFILES}?configuration=abc").status_code == 400
    assert client.get(f"{PROFILES}?configuration={2**70}").status_code == 400


def test_two_first_imports_do_not_replace_each_other(client: Any, cluster_id: int) -> None:
    """Both saw no configuration; the second to run finds the first's and is refused (412)
    instead of silently replacing it. With If-Match: * it may overwrite, knowingly."""
    cluster = Cluster.objects.get(pk=cluster_id)
    context = ChangeContext.system()
    service = policies.SchedulerConfigurationService()
    first, created = service.import_document(
        cluster, IMPORTED, context, expected_version=policies.NOT_THERE_YET
    )
    assert created
    with pytest.raises(policies.PreconditionFailed):
        service.import_document(
            cluster,
            IMPORTED.replace("cpu: 75", "cpu: 76"),
            context,
            expected_version=policies.NOT_THERE_YET,
        )
    assert SchedulerConfiguration.objects.get().version == first.version
    forced = client.post(
        f"{CONFIGS}import/",
        {"cluster": cluster_id, "document": IMPORTED.replace("cpu: 75", "cpu: 76")},
        format="json",
        HTTP_IF_MATCH="*",
    )
    assert ok(forced)["version"] == first.version + 1
