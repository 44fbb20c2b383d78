"""The profile editor with Django's test client: the target's plugins per extension point,
checks of the names typed against that registry, the effective plugins, errors on the box at
fault, and titles that read as sentences."""

from __future__ import annotations

from typing import Any

import pytest
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
        scheduler_name="",
        plugins={"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
    )


def data(profile: SchedulerProfile, **boxes: str) -> dict[str, str]:
    return {
        "version": str(profile.version),
        "scheduler_name": "",
        "position": "0",
        "plugins_multiPoint_enabled": "LoadAwareScheduling",
        **boxes,
    }


def html_of(response: Any) -> str:
    return str(response.content.decode())


def test_each_point_lists_the_plugins_the_target_registers(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    response = client.get(f"/policies/profiles/{profile.pk}/edit/")
    assert response.status_code == 200
    rows = {row.point: row for row in response.context["plugin_rows"]}
    plugin_help = response.context["plugin_help"]
    assert plugin_help.target == "koord-scheduler@1.7" and plugin_help.complete
    queue_sort = [p.name for p in rows["queueSort"].registered]
    assert "PrioritySort" in queue_sort and "NodePorts" not in queue_sort
    score = {p.name: p.modelled for p in rows["score"].registered}
    assert score["LoadAwareScheduling"] is True
    assert score["Reservation"] is False  # koord-scheduler's, not modelled by the engine
    html = html_of(response)
    assert "Checked against <strong>koord-scheduler@1.7</strong>" in html
    assert 'aria-label="Plugins koord-scheduler@1.7 registers for score"' in html
    assert '<code>Reservation</code> <span class="badge not-modelled">not modelled</span>' in html


def test_effective_plugins_show_defaults_and_multipoint_expanded(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    response = client.get(f"/policies/profiles/{profile.pk}/edit/")
    effective = dict(response.context["plugin_help"].effective)
    score = {p.name: p for p in effective["score"]}
    assert "LoadAwareScheduling" in score and "NodeResourcesFit" in score
    assert not score["LoadAwareScheduling"].listed_here  # from multiPoint
    assert [p.name for p in effective["queueSort"]] == ["PrioritySort"]
    # Preview of a change: the table follows the input, not the stored profile.
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {
            **data(profile),
            "plugins_score_enabled": "NodeResourcesBalancedAllocation 5",
            "plugins_score_disabled": "ImageLocality",
            "preview": "1",
        },
    )
    assert response.status_code == 200
    effective = dict(response.context["plugin_help"].effective)
    score = {p.name: p for p in effective["score"]}
    assert "ImageLocality" not in score
    assert score["NodeResourcesBalancedAllocation"].weight == 5
    assert score["NodeResourcesBalancedAllocation"].listed_here
    assert "Effective plugins" in html_of(response)


def test_an_unknown_plugin_is_an_error_on_its_box_naming_the_target(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {**data(profile), "plugins_filter_enabled": "NodePorts\nNoSuchPlugin", "save": "1"},
    )
    assert response.status_code == 400
    form = response.context["form"]
    [message] = form.errors["plugins_filter_enabled"]
    assert message.startswith("Line 2: NoSuchPlugin: koord-scheduler@1.7 registers no plugin")
    assert "__all__" not in form.errors  # not only a summary
    summary = response.context["errors"]
    assert summary == [("id_plugins_filter_enabled", "filter enabled", message)]
    # A plugin at a point it does not implement, and a multiPoint one the engine reports with
    # an index that counts the default plugins: both on their own box, at the typed line.
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {
            **data(profile),
            "plugins_score_enabled": "NodePorts",
            "plugins_multiPoint_enabled": "LoadAwareScheduling\nGhost",
            "save": "1",
        },
    )
    errors = response.context["form"].errors
    [score] = errors["plugins_score_enabled"]
    assert score.startswith("Line 1: NodePorts: registered by koord-scheduler@1.7, but it is not")
    [multi] = errors["plugins_multiPoint_enabled"]
    assert multi.startswith("Line 2: Ghost: koord-scheduler@1.7 registers no plugin")
    profile.refresh_from_db()
    assert profile.version == 1


def test_a_misspelt_plugin_name_suggests_the_registered_one(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    """kube-scheduler matches plugin names exactly: "noderesourcesfit" or "LoadAwareScheduler"
    is an unknown plugin, and the error names the one meant; a name like none gets no guess."""
    client.force_login(editor)
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {
            **data(profile),
            "plugins_filter_enabled": "noderesourcesfit\nLoadAwareSchedulng\nZzzTop",
            "save": "1",
        },
    )
    assert response.status_code == 400
    messages = response.context["form"].errors["plugins_filter_enabled"]
    assert len(messages) == 3
    assert messages[0].endswith("Did you mean NodeResourcesFit?")
    assert messages[1].endswith("Did you mean LoadAwareScheduling?")
    assert "Did you mean" not in messages[2]


def test_engine_errors_go_to_the_box_at_fault(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    client.force_login(editor)
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {**data(profile), "plugins_queueSort_enabled": "PrioritySort\nCoscheduling", "save": "1"},
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert errors["plugins_queueSort_enabled"]
    assert set(errors) == {"plugins_queueSort_enabled"}


def test_a_custom_scheduler_warns_instead(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    cluster = profile.configuration.cluster
    cluster.scheduler_flavor, cluster.scheduler_version = "custom", "1.30"
    cluster.save()
    client.force_login(editor)
    response = client.post(
        f"/policies/profiles/{profile.pk}/edit/",
        {**data(profile), "plugins_filter_enabled": "MyFilter", "preview": "1"},
    )
    assert response.status_code == 200
    [row] = [r for r in response.context["plugin_rows"] if r.point == "filter"]
    [note] = row.enabled_notes
    assert note.startswith("MyFilter: custom@1.30 registers no plugin of that name")
    assert "kept, but not checked" in note
    assert note in html_of(response)


def test_titles_read_as_sentences(client: Client, editor: User, profile: SchedulerProfile) -> None:
    client.force_login(editor)
    configuration = profile.configuration
    name = configuration.cluster.name
    titles = {
        f"/policies/profiles/new/?parent={configuration.pk}": (
            f"New profile in scheduler configuration of cluster {name}"
        ),
        f"/policies/profiles/{profile.pk}/edit/": "Edit profile default-scheduler",
        f"/policies/profiles/{profile.pk}/": "Profile default-scheduler",
        f"/policies/profiles/{profile.pk}/history/": "History of profile default-scheduler",
        f"/policies/configurations/{configuration.pk}/": (
            f"Scheduler configuration of cluster {name}"
        ),
        f"/policies/configurations/{configuration.pk}/edit/": (
            f"Edit scheduler configuration of cluster {name}"
        ),
        f"/policies/configurations/{configuration.pk}/history/": (
            f"History of scheduler configuration of cluster {name}"
        ),
        f"/policies/loadaware/new/?parent={profile.pk}": (
            "New LoadAware args for profile default-scheduler"
        ),
        f"/policies/thresholds/new/?parent={configuration.cluster.pk}": (
            f"New node threshold policy of cluster {name}"
        ),
    }
    for path, title in titles.items():
        response = client.get(path)
        assert response.status_code == 200, path
        assert f"<title>{title} · schedboard</title>" in html_of(response), path
        assert "configuration scheduler configuration" not in html_of(response)


def test_the_profile_page_shows_its_effective_plugins(
    client: Client, viewer: User, profile: SchedulerProfile
) -> None:
    client.force_login(viewer)
    response = client.get(f"/policies/profiles/{profile.pk}/")
    html = html_of(response)
    assert "Checked against <strong>koord-scheduler@1.7</strong>" in html
    assert '<h2 id="effective-h">Effective plugins</h2>' in html
    effective = dict(response.context["plugin_help"].effective)
    assert "LoadAwareScheduling" in [p.name for p in effective["filter"]]


def test_a_new_profile_shows_the_default_plugins(
    client: Client, editor: User, profile: SchedulerProfile
) -> None:
    # Beside an unnamed profile, every profile needs a name first: not valid, nothing shown.
    client.force_login(editor)
    response = client.get(f"/policies/profiles/new/?parent={profile.configuration.pk}")
    assert response.context["plugin_help"].effective is None
    assert "Not known until the configuration is valid" in html_of(response)
    policies.ProfileService().update(
        profile.pk, {"scheduler_name": "default-scheduler"}, SYSTEM, expected_version=1
    )
    response = client.get(f"/policies/profiles/new/?parent={profile.configuration.pk}")
    effective = dict(response.context["plugin_help"].effective)
    assert [p.name for p in effective["queueSort"]] == ["PrioritySort"]
    assert "LoadAwareScheduling" not in [p.name for p in effective["filter"]]
