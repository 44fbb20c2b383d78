"""The policy editors with Django's test client: scheduler configurations, profiles, LoadAware
args, node threshold and collect policies — create, update, delete, inline errors from the
engine's validators, preview and diff, stale versions, history and revert, and roles."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.accounts.changes import ChangeContext
from policy.accounts.models import PolicyChange
from policy.clusters.models import ClusterSnapshot
from policy.core.choices import ChangeSource, PushMode
from policy.policies import services as policies
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.sync.models import SyncJob

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()


@pytest.fixture
def tree(demo_snapshot: ClusterSnapshot) -> dict[str, Any]:
    """A configuration with one LoadAware profile and its args, made through the services."""
    configuration = policies.SchedulerConfigurationService().create(
        {"cluster": demo_snapshot.cluster}, SYSTEM
    )
    profile = policies.ProfileService().create(
        {
            "configuration": configuration,
            "scheduler_name": "",
            "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
        },
        SYSTEM,
    )
    args = policies.LoadAwareArgsService().create(
        {"profile": profile, "usage_thresholds": {"cpu": 45, "memory": 90}}, SYSTEM
    )
    return {
        "cluster": demo_snapshot.cluster,
        "configuration": configuration,
        "profile": profile,
        "args": args,
    }


def map_rows(field: str, entries: dict[str, str], blank: int = 2) -> dict[str, list[str]]:
    """A resource map as the editor posts it: a resource and a value per row, then blank rows."""
    return {
        f"{field}-resource": [*entries, *[""] * blank],
        f"{field}-value": [*entries.values(), *[""] * blank],
    }


def with_rows(data: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``data`` updated: a dict value is a resource map's rows; text is a script's YAML."""
    for key, value in changes.items():
        for suffix in ("", "-resource", "-value"):
            data.pop(f"{key}{suffix}", None)
        data.update(map_rows(key, value) if isinstance(value, dict) else {key: value})
    return data


def args_data(args: LoadAwareSchedulingArgs, **changes: Any) -> dict[str, Any]:
    data = {
        "version": str(args.version),
        **map_rows("usage_thresholds", {"cpu": "45", "memory": "90"}),
    }
    return with_rows(data, changes)


def html_of(response: Any) -> str:
    return str(response.content.decode())


# -- roles ----------------------------------------------------------------------------------------


def test_viewer_reads_every_page_without_edit_controls(
    client: Client, viewer: User, tree: dict[str, Any]
) -> None:
    client.force_login(viewer)
    args = tree["args"]
    pages = [
        "/policies/",
        f"/policies/configurations/{tree['configuration'].pk}/",
        f"/policies/profiles/{tree['profile'].pk}/",
        f"/policies/loadaware/{args.pk}/",
        f"/policies/loadaware/{args.pk}/history/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        html = html_of(response)
        assert re.search(r"<title>[^<]+ · schedboard</title>", html)
        assert "/edit/" not in html and "/delete/" not in html and "/new/" not in html, url
        assert "Revert to" not in html
    for url in (
        f"/policies/loadaware/{args.pk}/edit/",
        f"/policies/loadaware/{args.pk}/delete/",
        f"/policies/loadaware/new/?parent={tree['profile'].pk}",
    ):
        assert client.get(url).status_code == 403, url
    response = client.post(f"/policies/loadaware/{args.pk}/edit/", args_data(args))
    assert response.status_code == 403
    response = client.post(
        f"/policies/loadaware/{args.pk}/revert/", {"target": "1", "version": "1"}
    )
    assert response.status_code == 403
    assert LoadAwareSchedulingArgs.objects.get().version == args.version


def test_editor_sees_edit_controls_and_nobody_sees_nothing(
    client: Client, editor: User, nobody: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    html = html_of(client.get("/policies/"))
    assert f"/policies/loadaware/{tree['args'].pk}/edit/" in html
    assert "New threshold policy" in html and "New collect policy" in html
    cluster = tree["configuration"].cluster_id
    assert f'href="/policies/?cluster={cluster}" aria-current="page"' in html  # the nav entry
    client.force_login(nobody)
    assert client.get("/policies/").status_code == 403
    assert client.get("/policies/unknown/1/").status_code == 403  # role first
    client.force_login(editor)
    assert client.get("/policies/unknown/1/").status_code == 404


# -- LoadAware args -------------------------------------------------------------------------------


def test_loadaware_form_shows_every_field_with_defaults_and_labels(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    response = client.get(f"/policies/loadaware/{tree['args'].pk}/edit/")
    assert response.status_code == 200
    html = html_of(response)
    assert "<title>Edit LoadAware args of profile default-scheduler · schedboard</title>" in html
    for field in LoadAwareSchedulingArgs.SNAPSHOT_FIELDS:
        if field != "profile":
            labelled = f'for="id_{field}"' in html  # a resource map is a group of rows
            assert labelled or f'resource-map" id="id_{field}"' in html, field
    assert "<legend>Filter: usage thresholds</legend>" in html
    assert "Default: cpu: 65, memory: 95." in html  # Koordinator's default, visible
    assert 'placeholder="180"' in html
    assert "Koordinator: The resource utilization threshold" in html  # the proposal's text
    assert f'name="version" value="{tree["args"].version}"' in html


def test_loadaware_field_help_states_each_default_once(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    """The model's help names the default for the API schema; the editor shows the default
    apart ("Default: false."), so the help beside it must not say it again."""
    client.force_login(editor)
    html = html_of(client.get(f"/policies/loadaware/{tree['args'].pk}/edit/"))
    helps = re.findall(r'<small class="help" id="id_(\w+)_helptext">(.*?)</small>', html, re.S)
    assert len(helps) > 15
    for field, text in helps:
        own = re.sub(r'<span class="proposal">.*?</span>', "", text)  # Koordinator's words
        assert len(re.findall(r"\bDefault\b", own)) <= 1, (field, text)
    shown = dict(helps)
    assert "Default: 180." in shown["node_metric_expiration_seconds"]
    assert "abnormal. Must be &gt; 0." in shown["node_metric_expiration_seconds"]
    assert "The default applies when empty" in shown["usage_thresholds"]
    assert "<strong>Default: false.</strong>" in shown["prod_usage_include_sys"]


def test_invalid_threshold_is_shown_inline_with_koordinators_rule(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    args = tree["args"]
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds={"cpu": "150", "memory": "90"}, save="1"),
    )
    assert response.status_code == 400
    form = response.context["form"]
    assert form.errors["usage_thresholds"] == [
        "resource Threshold of cpu should be less than 100, got 150"
    ]
    html = html_of(response)
    assert "<title>Error: Edit LoadAware args" in html
    assert 'href="#id_usage_thresholds_0_value"' in html  # the summary links to the cpu row
    assert 'aria-invalid="true"' in html
    assert 'value="cpu"' in html and 'value="150"' in html  # input kept
    # The error is on the cpu row (its inputs point at it), not repeated on the field.
    assert 'id="id_usage_thresholds_0_errors"' in html
    assert 'aria-describedby="id_usage_thresholds_0_errors"' in html
    assert 'id="id_usage_thresholds_errors"' not in html
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 45, "memory": 90}


def test_preview_renders_yaml_and_diff_without_saving(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    args = tree["args"]
    cluster = tree["cluster"]
    cluster.push_mode = PushMode.AUTOMATIC
    cluster.save(update_fields=["push_mode"])
    changes = PolicyChange.objects.count()
    jobs = SyncJob.objects.count()
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds={"cpu": "70", "memory": "90"}, preview="1"),
    )
    assert response.status_code == 200
    preview = response.context["preview"]
    lines = [line.replace(" ", "") for _, line in preview.diff]
    assert "-cpu:45" in lines and "+cpu:70" in lines
    assert "kind: KubeSchedulerConfiguration" in preview.after.text
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 45, "memory": 90}
    assert PolicyChange.objects.count() == changes  # nothing recorded
    assert SyncJob.objects.count() == jobs  # nor pushed
    assert SchedulerConfiguration.objects.get().version == tree["configuration"].version + 2


def test_save_goes_through_the_service_and_is_recorded(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    args = tree["args"]
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(
            args,
            usage_thresholds={"cpu": "70", "memory": "90"},
            filter_expired_node_metrics="false",
            dominant_resource_weight="10",
            save="1",
        ),
    )
    assert response.status_code == 302
    assert response["Location"] == f"/policies/loadaware/{args.pk}/"
    args.refresh_from_db()
    assert args.version == 2 and args.usage_thresholds == {"cpu": 70, "memory": 90}
    assert args.filter_expired_node_metrics is False and args.dominant_resource_weight == 10
    change = PolicyChange.objects.filter(object_id=args.pk, action="update").first()
    assert change is not None and change.source == ChangeSource.UI
    assert change.user == editor
    page = client.get(response["Location"])
    assert "Saved LoadAware args of profile default-scheduler as version 2." in html_of(page)


def test_stale_version_shows_their_change_and_keeps_input(
    client: Client, editor: User, operator: User, tree: dict[str, Any]
) -> None:
    args = tree["args"]
    policies.LoadAwareArgsService().update(
        args.pk,
        {"usage_thresholds": {"cpu": 50, "memory": 90}},
        ChangeContext(user=operator, source=ChangeSource.API),
        expected_version=args.version,
    )
    client.force_login(editor)
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds={"cpu": "60", "memory": "90"}, save="1"),
    )
    assert response.status_code == 409
    html = html_of(response)
    assert "Someone else changed this LoadAware args" in html
    assert "otto" in html  # who
    assert 'value="60"' in html  # the user's input is kept
    assert "cpu: 50, memory: 90" in html  # their value, as people read it
    assert response.context["form"]["version"].value() == "2"
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 50, "memory": 90}
    # Saving again (now at the current version) replaces their change, knowingly.
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds={"cpu": "60", "memory": "90"}, version="2", save="1"),
    )
    assert response.status_code == 302
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 60, "memory": 90}


def test_create_and_delete_loadaware_args(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    profile = tree["profile"]
    args = tree["args"]
    page = client.get(f"/policies/loadaware/{args.pk}/delete/")
    assert page.status_code == 200
    assert any(line.startswith("-") for _, line in page.context["preview"].diff)
    response = client.post(f"/policies/loadaware/{args.pk}/delete/", {"version": "1"})
    assert response.status_code == 302
    assert not LoadAwareSchedulingArgs.objects.exists()
    response = client.get(f"/policies/loadaware/new/?parent={profile.pk}")
    assert response.status_code == 200 and "<title>New LoadAware args" in html_of(response)
    response = client.post(
        "/policies/loadaware/new/",
        {"parent": profile.pk, **map_rows("usage_thresholds", {"cpu": "55"}), "save": "1"},
    )
    assert response.status_code == 302
    created = LoadAwareSchedulingArgs.objects.get()
    assert created.profile == profile and created.usage_thresholds == {"cpu": 55}


def test_delete_with_stale_version_is_refused(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    args = tree["args"]
    policies.LoadAwareArgsService().update(
        args.pk, {"dominant_resource_weight": 5}, SYSTEM, expected_version=1
    )
    response = client.post(f"/policies/loadaware/{args.pk}/delete/", {"version": "1"})
    assert response.status_code == 409
    assert "Someone else changed this" in html_of(response)
    assert LoadAwareSchedulingArgs.objects.exists()


def test_yaml_typos_are_field_errors(client: Client, editor: User, tree: dict[str, Any]) -> None:
    client.force_login(editor)
    args = tree["args"]
    response = client.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds="cpu: [", resource_weights="cpu: lots", save="1"),
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert errors["usage_thresholds"][0].startswith("Not valid YAML")
    assert errors["resource_weights"] == ['cpu: must be an integer, not "lots".']


# -- history and revert ---------------------------------------------------------------------------


def test_history_lists_diffs_and_reverts(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    args = tree["args"]
    policies.LoadAwareArgsService().update(
        args.pk, {"usage_thresholds": {"cpu": 80, "memory": 90}}, SYSTEM, expected_version=1
    )
    client.force_login(editor)
    response = client.get(f"/policies/loadaware/{args.pk}/history/")
    html = html_of(response)
    assert response.status_code == 200
    assert "v2 · Updated by the system" in html and "v1 · Created" in html
    # The form's label, values as people read them, only what changed.
    assert "Usage thresholds (usageThresholds)" in html and "usage_thresholds" not in html
    assert "cpu: 80, memory: 90" in html and "&quot;" not in html
    assert "Revert to v1" in html and "Revert to v2" not in html
    response = client.post(
        f"/policies/loadaware/{args.pk}/revert/", {"target": "1", "version": "2"}, follow=True
    )
    assert "Reverted to version 1; saved as version 3." in html_of(response)
    args.refresh_from_db()
    assert args.version == 3 and args.usage_thresholds == {"cpu": 45, "memory": 90}
    # A stale revert changes nothing and says why.
    response = client.post(
        f"/policies/loadaware/{args.pk}/revert/", {"target": "2", "version": "2"}, follow=True
    )
    assert "someone changed it meanwhile (now version 3)" in html_of(response)
    assert LoadAwareSchedulingArgs.objects.get().version == 3


def test_configuration_history_shows_the_document_diff(
    client: Client, viewer: User, tree: dict[str, Any]
) -> None:
    client.force_login(viewer)
    configuration = tree["configuration"]
    response = client.get(f"/policies/configurations/{configuration.pk}/history/")
    html = html_of(response)
    assert "Document diff (YAML)" in html
    assert re.search(r"<span class=\"d-add\">\+ +cpu: 45</span>", html)


# -- scheduler configuration and profiles ---------------------------------------------------------


def test_configuration_create_update_and_detail(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    cluster = demo_snapshot.cluster
    assert "Create a scheduler configuration" in html_of(client.get("/policies/"))
    response = client.post(
        "/policies/configurations/new/",
        {"parent": cluster.pk, "parallelism": "8", "description": "tuned", "save": "1"},
    )
    assert response.status_code == 302
    configuration = SchedulerConfiguration.objects.get()
    assert configuration.parallelism == 8
    detail = html_of(client.get(response["Location"]))
    assert "parallelism: 8" in detail  # the rendered YAML
    written, _, effective = detail.partition("Effective configuration: every default filled in")
    assert "podMaxBackoffSeconds: 10" not in written  # no default written
    assert 'class="code effective"' in effective and "podMaxBackoffSeconds: 10" in effective
    response = client.post(
        f"/policies/configurations/{configuration.pk}/edit/",
        {"version": "1", "parallelism": "0", "save": "1"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["parallelism"]
    response = client.post(
        f"/policies/configurations/{configuration.pk}/edit/",
        {"version": "1", "parallelism": "4", "leader_election": "leaderElect: false", "save": "1"},
    )
    assert response.status_code == 302
    configuration.refresh_from_db()
    assert configuration.parallelism == 4 and configuration.leader_election == {
        "leaderElect": False
    }


def test_profile_plugins_per_extension_point(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    profile = tree["profile"]
    page = client.get(f"/policies/profiles/{profile.pk}/edit/")
    assert page.status_code == 200
    html = html_of(page)
    assert "<legend>Plugins per extension point</legend>" in html
    assert "\nLoadAwareScheduling</textarea>" in html
    data = {
        "version": str(profile.version),
        "scheduler_name": "",
        "position": "0",
        "plugins_multiPoint_enabled": "LoadAwareScheduling",
        "plugins_score_enabled": "NodeResourcesBalancedAllocation 3",
        "plugin_config": "- name: NodeResourcesFit\n  args:\n    scoringStrategy:\n"
        "      type: MostAllocated",
    }
    response = client.post(f"/policies/profiles/{profile.pk}/edit/", {**data, "preview": "1"})
    assert response.status_code == 200
    assert any("MostAllocated" in line for _, line in response.context["preview"].diff)
    response = client.post(f"/policies/profiles/{profile.pk}/edit/", {**data, "save": "1"})
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.plugins["score"] == {
        "enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 3}]
    }
    # An unknown plugin: the engine's error, inline.
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {**data, "version": "2", "plugins_filter_enabled": "NoSuchPlugin", "save": "1"},
    )
    assert response.status_code == 400
    assert "NoSuchPlugin" in html_of(response)
    # A malformed line.
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {**data, "version": "2", "plugins_score_enabled": "A b c", "save": "1"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["plugins_score_enabled"]


def test_loadaware_args_are_never_a_plugin_config_entry(
    client: Client, api_client: Any, editor: User, tree: dict[str, Any]
) -> None:
    """The page and the API refuse it with the one rule's message, on the same field."""
    profile = tree["profile"]
    entry = [{"name": "LoadAwareScheduling", "args": {"usageThresholds": {"cpu": 70}}}]
    client.force_login(editor)
    page = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {
            "version": str(profile.version),
            "scheduler_name": "",
            "position": "0",
            "plugins_multiPoint_enabled": "LoadAwareScheduling",
            "plugin_config": yaml.safe_dump(entry),
            "save": "1",
        },
    )
    assert page.status_code == 400
    [message] = page.context["form"].errors["plugin_config"]
    api_client.force_login(editor)
    api = api_client.patch(
        f"/api/v1/profiles/{profile.pk}/",
        {"plugin_config": entry},
        format="json",
        HTTP_IF_MATCH=f'W/"{profile.version}"',
    )
    assert api.status_code == 400
    assert [(e["field"], e["detail"]) for e in api.json()["errors"]] == [("plugin_config", message)]
    assert "/api/v1/loadaware-args/" in message
    profile.refresh_from_db()
    assert profile.plugin_config == []


def test_profile_create_and_duplicate_name(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    client.force_login(editor)
    configuration = tree["configuration"]
    response = client.post(
        "/policies/profiles/new/",
        {"parent": configuration.pk, "scheduler_name": "batch", "position": "1", "save": "1"},
    )
    # The existing profile is the unnamed default-scheduler: a second profile needs names.
    assert response.status_code == 400
    assert "schedulerName" in html_of(response) or response.context["form"].errors
    assert SchedulerProfile.objects.count() == 1


def test_delete_configuration(client: Client, editor: User, tree: dict[str, Any]) -> None:
    client.force_login(editor)
    configuration = tree["configuration"]
    response = client.post(
        f"/policies/configurations/{configuration.pk}/delete/",
        {"version": str(configuration.version + 2)},
    )
    assert response.status_code == 302
    assert not SchedulerConfiguration.objects.exists()


# -- node threshold policies ----------------------------------------------------------------------


def threshold_data(**changes: Any) -> dict[str, Any]:
    data = {
        "name": "hot-nodes",
        "enabled": "on",
        "priority": "10",
        "node_selector": "{}",
        **map_rows("usage_thresholds", {"cpu": "50"}),
    }
    return with_rows(data, changes)


def test_threshold_policy_preview_selector_and_window(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    cluster = demo_snapshot.cluster
    response = client.post(
        "/policies/thresholds/new/",
        {"parent": cluster.pk, **threshold_data(preview="1")},
    )
    assert response.status_code == 200
    preview = response.context["preview"]
    assert len(preview.nodes) == 12 and preview.active is True
    assert preview.annotation == '{"usageThresholds":{"cpu":50}}'
    assert any(line.startswith("+") and "cpu" in line for _, line in preview.diff)
    assert not NodeThresholdPolicy.objects.exists()
    response = client.post(
        "/policies/thresholds/new/",
        {"parent": cluster.pk, **threshold_data(active_from="22:00", active_until="06:00")},
    )
    assert response.status_code == 302
    policy = NodeThresholdPolicy.objects.get()
    assert str(policy.active_from) == "22:00:00"
    detail = client.get(response["Location"])
    assert detail.context["hits"] and len(detail.context["hits"]) == 12


def test_threshold_policy_errors_inline(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    cluster = demo_snapshot.cluster
    response = client.post(
        "/policies/thresholds/new/",
        {
            "parent": cluster.pk,
            **threshold_data(usage_thresholds={"cpu": "101"}, active_from="22:00", save="1"),
        },
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert "should be less than 100" in errors["usage_thresholds"][0]
    assert errors["active_until"] == ["Give both active_from and active_until, or neither."]
    response = client.post(
        "/policies/thresholds/new/",
        {"parent": cluster.pk, **threshold_data(node_names="node-a", save="1")},
    )
    assert response.status_code == 400
    assert "not both" in str(response.context["form"].errors["node_selector"])


def test_threshold_policy_update_delete_and_revert(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    policy = policies.NodeThresholdPolicyService().create(
        {
            "cluster": demo_snapshot.cluster,
            "name": "p",
            "node_selector": {},
            "usage_thresholds": {"cpu": 50},
        },
        SYSTEM,
    )
    client.force_login(editor)
    response = client.post(
        f"/policies/thresholds/{policy.pk}/edit/",
        threshold_data(name="p", version="1", usage_thresholds={"cpu": "40"}, save="1"),
    )
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.usage_thresholds == {"cpu": 40} and policy.version == 2
    client.post(f"/policies/thresholds/{policy.pk}/revert/", {"target": "1", "version": "2"})
    policy.refresh_from_db()
    assert policy.usage_thresholds == {"cpu": 50} and policy.version == 3
    response = client.post(f"/policies/thresholds/{policy.pk}/delete/", {"version": "3"})
    assert response.status_code == 302
    assert not NodeThresholdPolicy.objects.exists()


# -- collect policies -----------------------------------------------------------------------------


def test_collect_policies(client: Client, editor: User, demo_snapshot: ClusterSnapshot) -> None:
    client.force_login(editor)
    cluster = demo_snapshot.cluster
    response = client.post(
        "/policies/collect/new/",
        {
            "parent": cluster.pk,
            "name": "default",
            "is_default": "on",
            "priority": "0",
            "report_interval_seconds": "30",
            "preview": "1",
        },
    )
    assert response.status_code == 200
    assert any(
        '"metricReportIntervalSeconds": 30' in line for _, line in response.context["preview"].diff
    )
    data = {
        "parent": cluster.pk,
        "name": "default",
        "is_default": "on",
        "priority": "0",
        "report_interval_seconds": "30",
        "save": "1",
    }
    assert client.post("/policies/collect/new/", data).status_code == 302
    response = client.post("/policies/collect/new/", {**data, "name": "second"})
    assert response.status_code == 400
    assert "already has a default collect policy" in html_of(response)
    policy = NodeMetricCollectPolicy.objects.get()
    response = client.post(
        f"/policies/collect/{policy.pk}/edit/",
        {"version": "1", "name": "default", "is_default": "on", "priority": "0", "save": "1"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["report_interval_seconds"]
    response = client.post(
        f"/policies/collect/{policy.pk}/edit/",
        {
            "version": "1",
            "name": "default",
            "is_default": "on",
            "priority": "0",
            "aggregate_duration_seconds": "120",
            "save": "1",
        },
    )
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.aggregate_duration_seconds == 120 and policy.report_interval_seconds is None
    assert client.get(f"/policies/collect/{policy.pk}/history/").status_code == 200


def test_an_edit_or_delete_without_its_version_is_refused(
    client: Client, editor: User, tree: dict[str, Any]
) -> None:
    """Without the version the form was made from, another person's change could not be
    noticed: nothing is saved or deleted."""
    client.force_login(editor)
    args = tree["args"]
    data = args_data(args, usage_thresholds="cpu: 33", save="1")
    del data["version"]
    response = client.post(f"/policies/loadaware/{args.pk}/edit/", data)
    assert response.status_code == 400
    assert "which version it was made from" in str(response.context["form"].non_field_errors())
    response = client.post(f"/policies/loadaware/{args.pk}/delete/", {})
    assert response.status_code == 400
    assert "which version it was made from" in response.context["problem"]
    args.refresh_from_db()
    assert args.version == 1 and args.usage_thresholds["cpu"] != 33


def test_a_threshold_no_node_has_is_warned_about_on_preview_and_save(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    """A typo is valid (any resource name is), so it is a warning, not an error: on its row
    when previewed, in the preview's notice, and after saving."""
    client.force_login(editor)
    data = {"parent": demo_snapshot.cluster_id, **threshold_data(usage_thresholds={"cpuu": "70"})}
    expected = (
        "Usage thresholds: no node of the newest snapshot reports 'cpuu' (a typo?), so this "
        "entry is never used. A non-empty map replaces the LoadAware args' map: with no cpu "
        "and memory entry here, the cpu and memory check would be off."
    )
    response = client.post("/policies/thresholds/new/", {**data, "preview": "1"})
    assert response.status_code == 200
    assert response.context["warnings"] == [expected]
    html = html_of(response)
    assert 'id="id_usage_thresholds_0_warnings"' in html
    assert html.count("no node of the newest snapshot reports &#x27;cpuu&#x27;") == 2
    assert not NodeThresholdPolicy.objects.exists()
    response = client.post("/policies/thresholds/new/", {**data, "save": "1"}, follow=True)
    assert response.status_code == 200
    shown = [str(message) for message in response.context["messages"]]
    assert expected in shown, shown
    policy = NodeThresholdPolicy.objects.get()
    assert policy.usage_thresholds == {"cpuu": 70}
    page = client.get(f"/policies/thresholds/{policy.pk}/edit/")  # and when edited again
    assert 'id="id_usage_thresholds_0_warnings"' in html_of(page)


def test_known_resources_are_offered_and_not_warned_about(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    page = client.get(f"/policies/thresholds/new/?parent={demo_snapshot.cluster_id}")
    html = html_of(page)
    assert '<datalist id="id_usage_thresholds_known"><option value="cpu">' in html
    assert '<option value="ephemeral-storage">' in html
    response = client.post(
        "/policies/thresholds/new/",
        {
            "parent": demo_snapshot.cluster_id,
            **threshold_data(usage_thresholds={"cpu": "70", "memory": "80"}, preview="1"),
        },
    )
    assert response.status_code == 200 and response.context["warnings"] == []
