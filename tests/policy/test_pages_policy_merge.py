"""Editing a policy someone else saved meanwhile: the version the editor was opened at goes
through Preview to Save, nothing is saved over the other change unseen, changes to different
fields are merged for the user to confirm, and a field both changed needs a choice."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from policy.accounts.changes import ChangeContext
from policy.clusters.models import ClusterSnapshot
from policy.core.choices import ChangeSource
from policy.policies import services as policies
from policy.policies.models import LoadAwareSchedulingArgs
from tests.policy_trees import loadaware_args

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()


@pytest.fixture
def args(demo_snapshot: ClusterSnapshot) -> LoadAwareSchedulingArgs:
    return loadaware_args(demo_snapshot.cluster)


def their_change(args: LoadAwareSchedulingArgs, operator: User, **values: Any) -> None:
    policies.LoadAwareArgsService().update(
        args.pk,
        values,
        ChangeContext(user=operator, source=ChangeSource.API),
        expected_version=args.version,
    )


def opened(client: Client, args: LoadAwareSchedulingArgs) -> dict[str, str]:
    """The editor's form data as a browser would post it unchanged."""
    response = client.get(f"/policies/loadaware/{args.pk}/edit/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'name="base_version" value="{args.version}"' in html
    form = response.context["form"]
    data = {name: form[name].value() for name in form.fields}
    out = {k: "" if v is None else str(v) for k, v in data.items()}
    out["base_version"] = str(args.version)
    return out


def reshown(response: Any) -> dict[str, Any]:
    """The re-shown form's data as the browser posts it next (with its hidden fields)."""
    data = {
        k: v if len(v) > 1 else v[0]
        for k, v in response.context["form"].data.lists()
        if k not in ("save", "preview")
    }
    merge = response.context.get("merge")
    if merge is not None:
        data["merged_version"] = str(merge.version)
    return data


def current() -> LoadAwareSchedulingArgs:
    return LoadAwareSchedulingArgs.objects.get()


def test_different_fields_are_merged_and_saved_once_confirmed(
    client: Client, editor: User, operator: User, args: LoadAwareSchedulingArgs
) -> None:
    client.force_login(editor)
    data = opened(client, args)
    their_change(args, operator, dominant_resource_weight=7)
    url = f"/policies/loadaware/{args.pk}/edit/"
    mine = data | {"usage_thresholds": "cpu: 60\nmemory: 90"}

    # Preview of a stale form: nothing runs, the form comes back merged.
    response = client.post(url, mine | {"preview": "1"})
    assert response.status_code == 409
    merge = response.context["merge"]
    assert [f.name for f in merge.theirs] == ["dominant_resource_weight"]
    assert [f.name for f in merge.mine] == ["usage_thresholds"]
    assert merge.both == [] and not merge.ready
    form = response.context["form"]
    assert form["dominant_resource_weight"].value() == "7"  # theirs, merged in
    assert form["usage_thresholds"].value() == "cpu: 60\nmemory: 90"  # yours, kept
    html = response.content.decode()
    assert "Someone else changed this LoadAware args" in html
    assert 'name="base_version" value="1"' in html and 'name="merged_version" value="2"' in html
    assert "Save merged version" in html
    assert current().version == 2

    # Preview of the merged form: the notice stays until it is saved.
    response = client.post(url, reshown(response) | {"preview": "1"})
    assert response.status_code == 200
    assert response.context["preview"] is not None
    assert response.context["merge"].ready
    assert "Someone else changed this LoadAware args" in response.content.decode()
    assert current().version == 2

    response = client.post(url, reshown(response) | {"save": "1"})
    assert response.status_code == 302
    saved = current()
    assert saved.version == 3
    assert saved.usage_thresholds == {"cpu": 60, "memory": 90}  # yours
    assert saved.dominant_resource_weight == 7  # and theirs


def test_a_field_both_changed_needs_a_choice(
    client: Client, editor: User, operator: User, args: LoadAwareSchedulingArgs
) -> None:
    client.force_login(editor)
    data = opened(client, args)
    their_change(args, operator, usage_thresholds={"cpu": 50, "memory": 90})
    url = f"/policies/loadaware/{args.pk}/edit/"

    response = client.post(url, data | {"usage_thresholds": "cpu: 60\nmemory: 90", "save": "1"})
    assert response.status_code == 409
    merge = response.context["merge"]
    assert [f.name for f in merge.both] == ["usage_thresholds"]
    clash = merge.both[0]
    assert (clash.base, clash.theirs, clash.mine) == (
        "cpu: 45\nmemory: 90",
        "cpu: 50\nmemory: 90",
        "cpu: 60\nmemory: 90",
    )
    html = response.content.decode()
    assert 'name="resolve-usage_thresholds" value="theirs"' in html
    assert 'name="resolve-usage_thresholds" value="mine"' in html
    assert current().usage_thresholds == {"cpu": 50, "memory": 90}

    # Saving the merged form without choosing still saves nothing.
    again = reshown(response)
    response = client.post(url, again | {"save": "1"})
    assert response.status_code == 409
    assert response.context["merge"].unresolved
    assert current().version == 2

    # Choosing yours saves it, knowingly.
    response = client.post(url, again | {"resolve-usage_thresholds": "mine", "save": "1"})
    assert response.status_code == 302
    assert current().usage_thresholds == {"cpu": 60, "memory": 90}
    assert current().version == 3


def test_choosing_theirs_keeps_their_value(
    client: Client, editor: User, operator: User, args: LoadAwareSchedulingArgs
) -> None:
    client.force_login(editor)
    data = opened(client, args)
    their_change(args, operator, usage_thresholds={"cpu": 50, "memory": 90})
    url = f"/policies/loadaware/{args.pk}/edit/"
    response = client.post(
        url,
        data | {"usage_thresholds": "cpu: 60\nmemory: 90", "dominant_resource_weight": "3"},
    )
    assert response.status_code == 409
    response = client.post(
        url, reshown(response) | {"resolve-usage_thresholds": "theirs", "save": "1"}
    )
    assert response.status_code == 302
    saved = current()
    assert saved.usage_thresholds == {"cpu": 50, "memory": 90}
    assert saved.dominant_resource_weight == 3


def test_another_change_after_the_merge_is_merged_again(
    client: Client, editor: User, operator: User, args: LoadAwareSchedulingArgs
) -> None:
    client.force_login(editor)
    data = opened(client, args)
    their_change(args, operator, dominant_resource_weight=7)
    url = f"/policies/loadaware/{args.pk}/edit/"
    response = client.post(url, data | {"usage_thresholds": "cpu: 60\nmemory: 90"})
    assert response.status_code == 409
    their_change(current(), operator, score_according_prod_usage=True)
    response = client.post(url, reshown(response) | {"save": "1"})
    assert response.status_code == 409  # merged with version 2, but it is at 3 now
    merge = response.context["merge"]
    assert merge.version == 3 and not merge.ready
    names = {f.name for f in merge.theirs}
    assert names == {"dominant_resource_weight", "score_according_prod_usage"}
    response = client.post(url, reshown(response) | {"save": "1"})
    assert response.status_code == 302
    saved = current()
    assert saved.version == 4 and saved.dominant_resource_weight == 7
    assert saved.score_according_prod_usage is True
    assert saved.usage_thresholds == {"cpu": 60, "memory": 90}


def test_threshold_policy_checkbox_and_time_window_are_merged(
    client: Client, editor: User, operator: User, demo_snapshot: ClusterSnapshot
) -> None:
    policy = policies.NodeThresholdPolicyService().create(
        {
            "cluster": demo_snapshot.cluster,
            "name": "hot-nodes",
            "node_selector": {},
            "usage_thresholds": {"cpu": 50},
            "priority": 10,
        },
        SYSTEM,
    )
    client.force_login(editor)
    url = f"/policies/thresholds/{policy.pk}/edit/"
    response = client.get(url)
    form = response.context["form"]
    data = {
        name: str(form[name].value() or "")
        for name in form.fields
        if name not in ("enabled", "node_selector")
    }
    data |= {"enabled": "on", "node_selector": "{}", "base_version": "1"}
    policies.NodeThresholdPolicyService().update(
        policy.pk,
        {"enabled": False, "active_from": "22:00", "active_until": "06:00"},
        ChangeContext(user=operator, source=ChangeSource.API),
        expected_version=1,
    )
    response = client.post(url, data | {"priority": "20", "save": "1"})
    assert response.status_code == 409
    merge = response.context["merge"]
    assert {f.name for f in merge.theirs} == {"enabled", "active_from", "active_until"}
    assert [f.name for f in merge.mine] == ["priority"]
    again = reshown(response)
    assert "enabled" not in again  # their unticked box, merged in
    response = client.post(url, again | {"save": "1"})
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.version == 3 and policy.priority == 20 and policy.enabled is False
    assert str(policy.active_from) == "22:00:00" and str(policy.active_until) == "06:00:00"


def test_profile_plugins_merge_per_extension_point(
    client: Client, editor: User, operator: User, args: LoadAwareSchedulingArgs
) -> None:
    profile = args.profile
    client.force_login(editor)
    url = f"/policies/profiles/{profile.pk}/edit/"
    response = client.get(url)
    form = response.context["form"]
    data = {
        name: "" if form[name].value() is None else str(form[name].value()) for name in form.fields
    }
    data["base_version"] = str(profile.version)
    policies.ProfileService().update(
        profile.pk,
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]},
                "score": {"disabled": [{"name": "ImageLocality"}]},
            }
        },
        ChangeContext(user=operator, source=ChangeSource.API),
        expected_version=profile.version,
    )
    response = client.post(url, data | {"percentage_of_nodes_to_score": "40", "save": "1"})
    assert response.status_code == 409
    merge = response.context["merge"]
    assert [f.name for f in merge.theirs] == ["plugins_score_disabled"]
    assert [f.name for f in merge.mine] == ["percentage_of_nodes_to_score"]
    response = client.post(url, reshown(response) | {"save": "1"})
    assert response.status_code == 302, response.context["errors"]
    profile.refresh_from_db()
    assert profile.percentage_of_nodes_to_score == 40
    assert profile.plugins["score"] == {"disabled": [{"name": "ImageLocality"}]}


def test_their_resource_map_is_merged_into_the_rows(
    client: Client, editor: User, operator: User, args: LoadAwareSchedulingArgs
) -> None:
    """The editor posts maps as rows of a resource and a value: their map comes back as rows."""
    client.force_login(editor)
    data: dict[str, Any] = opened(client, args)
    del data["usage_thresholds"]
    data |= {"usage_thresholds-resource": ["cpu", "memory", ""]}
    data |= {"usage_thresholds-value": ["45", "90", ""]}
    their_change(args, operator, usage_thresholds={"cpu": 55, "memory": 80})
    url = f"/policies/loadaware/{args.pk}/edit/"
    response = client.post(url, data | {"dominant_resource_weight": "4", "save": "1"})
    assert response.status_code == 409
    merge = response.context["merge"]
    assert [f.name for f in merge.theirs] == ["usage_thresholds"]
    assert merge.theirs[0].theirs == "cpu: 55\nmemory: 80"
    rows = response.context["form"]["usage_thresholds"].rows
    assert [(r.resource, r.value) for r in rows if r.resource] == [("cpu", "55"), ("memory", "80")]
    response = client.post(url, reshown(response) | {"save": "1"})
    assert response.status_code == 302
    saved = current()
    assert saved.usage_thresholds == {"cpu": 55, "memory": 80}
    assert saved.dominant_resource_weight == 4
