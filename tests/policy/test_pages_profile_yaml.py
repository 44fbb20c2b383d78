"""The profile editor's YAML mode: the whole profile as one text, read into the form's fields,
so it is checked, previewed, merged and saved exactly as the form mode does."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from policy.accounts.changes import ChangeContext
from policy.clusters.models import ClusterSnapshot
from policy.policies import services as policies
from policy.policies.models import SchedulerProfile
from tests.policy.builders import koord_profile

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()


@pytest.fixture
def profile(demo_snapshot: ClusterSnapshot) -> SchedulerProfile:
    return koord_profile(
        demo_snapshot.cluster,
        scheduler_name="batch",
        plugins={
            "multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]},
            "score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 3}]},
        },
        plugin_config=[{"name": "NodeResourcesBalancedAllocation", "args": {}}],
    )


def post_yaml(client: Client, profile: SchedulerProfile, text: str, button: str) -> Any:
    return client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {"version": str(profile.version), "position": "0", "profile_yaml": text, button: "1"},
    )


def test_yaml_mode_shows_the_stored_profile_with_only_what_is_set(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    response = client.get(f"/policies/profiles/{profile.pk}/edit/?mode=yaml")
    assert response.status_code == 200
    shown = yaml.safe_load(response.context["yaml_text"])
    assert shown == {
        "schedulerName": "batch",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]},
            "score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 3}]},
        },
        "pluginConfig": [{"name": "NodeResourcesBalancedAllocation", "args": {}}],
    }
    html = response.content.decode()
    assert 'name="profile_yaml"' in html and "plugins_score_enabled" not in html
    assert 'aria-current="page">Whole profile as YAML</a>' in html


def test_saving_yaml_goes_through_the_form_and_the_service(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    text = """
schedulerName: batch
percentageOfNodesToScore: 40
plugins:
  multiPoint:
    enabled: [{name: LoadAwareScheduling}]
  score:
    enabled:
      - {name: NodeResourcesBalancedAllocation, weight: 5}
    disabled:
      - name: ImageLocality
"""
    preview = post_yaml(client, profile, text, "preview")
    assert preview.status_code == 200
    assert preview.context["read_yaml"] and preview.context["preview"]
    form = preview.context["form"]
    assert form["plugins_score_enabled"].value() == "NodeResourcesBalancedAllocation 5"
    profile.refresh_from_db()
    assert profile.version == 1  # a preview saves nothing
    saved = post_yaml(client, profile, text, "save")
    assert saved.status_code == 302
    profile.refresh_from_db()
    assert profile.version == 2
    assert profile.percentage_of_nodes_to_score == 40
    assert profile.plugins["score"] == {
        "enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 5}],
        "disabled": [{"name": "ImageLocality"}],
    }
    assert profile.plugin_config == []  # left out of the YAML: removed, as in the form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("plugins: [x", "Not valid YAML (line 1)"),
        ("- a list", "Expected a mapping"),
        ("schedulerName: a\nparallelism: 4", "parallelism: not a field of a profile here"),
        ("plugins: {scoring: {enabled: []}}", "plugins.scoring: not an extension point"),
        ("plugins: {score: {enabled: [{name: X, weight: high}]}}", "weight: must be an integer"),
        ("plugins: {score: {enabled: [{nam: X}]}}", "plugins.score.enabled[0]: each plugin"),
        ("percentageOfNodesToScore: lots", "percentageOfNodesToScore: must be an integer"),
    ],
)
def test_yaml_that_is_not_a_profile_is_refused_naming_the_field_and_kept(
    client: Client, editor: User, profile: SchedulerProfile, text: str, said: str
) -> None:
    client.force_login(editor)
    response = post_yaml(client, profile, text, "save")
    assert response.status_code == 400
    [problem] = response.context["yaml_problems"]
    assert said in problem
    assert response.context["yaml_text"] == text  # nothing typed is lost
    profile.refresh_from_db()
    assert profile.version == 1


def test_engine_errors_from_yaml_land_on_the_box_at_fault(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    text = "plugins:\n  filter:\n    enabled: [{name: NodePorts}, {name: noderesourcesfit}]\n"
    response = post_yaml(client, profile, text, "save")
    assert response.status_code == 400
    [message] = response.context["form"].errors["plugins_filter_enabled"]
    assert message.startswith("Line 2: noderesourcesfit:")
    assert message.endswith("Did you mean NodeResourcesFit?")
    assert "Read from your YAML" in response.content.decode()


def test_a_stale_version_from_yaml_is_merged_not_overwritten(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    opened_at = profile.version
    policies.ProfileService().update(
        profile.pk, {"percentage_of_nodes_to_score": 70}, SYSTEM, expected_version=opened_at
    )
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {
            "version": str(opened_at),
            "base_version": str(opened_at),
            "position": "0",
            "profile_yaml": "schedulerName: batch\nplugins: {}\n",
            "save": "1",
        },
    )
    assert response.status_code == 409
    assert response.context["conflict"]
    profile.refresh_from_db()
    assert profile.version == 2 and profile.percentage_of_nodes_to_score == 70
