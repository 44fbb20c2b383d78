"""Importing a whole KubeSchedulerConfiguration from the pages: preview of what it creates or
replaces, what is kept as written, save on confirm through the same service as the API, and
errors that name the field and its line while keeping what was typed."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from policy.accounts.changes import ChangeContext
from policy.accounts.models import PolicyChange
from policy.clusters.models import ClusterSnapshot
from policy.policies import services as policies
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    SchedulerConfiguration,
    SchedulerProfile,
)

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()

DOCUMENT = """\
apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
parallelism: 8
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: LoadAwareScheduling
    score:
      disabled:
      - name: ImageLocality
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
  - name: LoadAwareScheduling
    args:
      usageThresholds:
        cpu: 70
- schedulerName: batch
  plugins:
    filter:
      enabled:
      - name: Reservation
"""

BAD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
  plugins:
    filter:
      enabled:
      - name: NodePorts
      - name: Nope
"""


def html_of(response: Any) -> str:
    return str(response.content.decode())


@pytest.fixture
def cluster(demo_snapshot: ClusterSnapshot) -> Any:
    cluster = demo_snapshot.cluster
    cluster.scheduler_flavor, cluster.scheduler_version = "koord-scheduler", "1.7"
    cluster.save()
    return cluster


def test_links_from_the_index_and_the_configuration_page(
    client: Client, editor: User, viewer: User, cluster: Any
) -> None:
    client.force_login(editor)
    link = f"/policies/configurations/import/?cluster={cluster.pk}"
    assert link in html_of(client.get(f"/policies/?cluster={cluster.pk}"))
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    assert link in html_of(client.get(f"/policies/?cluster={cluster.pk}"))
    assert link in html_of(client.get(f"/policies/configurations/{configuration.pk}/"))
    page = client.get(link)
    assert page.status_code == 200
    assert f"Import a KubeSchedulerConfiguration into cluster {cluster.name}" in html_of(page)
    client.force_login(viewer)
    assert link not in html_of(client.get(f"/policies/configurations/{configuration.pk}/"))
    assert client.get(link).status_code == 403


def test_preview_shows_what_it_creates_and_saves_on_confirm(
    client: Client, editor: User, cluster: Any
) -> None:
    client.force_login(editor)
    form = {"cluster": str(cluster.pk), "document": DOCUMENT}
    response = client.post("/policies/configurations/import/", {**form, "preview": "1"})
    assert response.status_code == 200
    plan = response.context["plan"]
    assert plan.creates and plan.api_version.endswith("/v1beta3")
    assert [(p.scheduler_name, p.action) for p in plan.profiles] == [
        ("default-scheduler", "new"),
        ("batch", "new"),
    ]
    default = plan.profiles[0]
    assert default.plugin_args == ["NodeResourcesFit"] and default.loadaware_args
    assert ("score", "disabled ImageLocality") in default.plugins
    assert any("v1beta3" in line for line in plan.kept)
    assert any("Reservation at filter" in line for line in plan.kept)  # not modelled
    assert any("parallelism: 8" in line for _, line in response.context["preview"].diff)
    html = html_of(response)
    assert "Import and save" in html and "MostAllocated" in html
    assert not SchedulerConfiguration.objects.exists()  # a preview saves nothing

    response = client.post("/policies/configurations/import/", {**form, "save": "1"})
    assert response.status_code == 302
    configuration = SchedulerConfiguration.objects.get()
    assert response["Location"] == f"/policies/configurations/{configuration.pk}/"
    assert configuration.parallelism == 8
    assert configuration.source_document["apiVersion"].endswith("/v1beta3")
    assert LoadAwareSchedulingArgs.objects.get().usage_thresholds == {"cpu": 70}
    change = PolicyChange.objects.filter(object_id=configuration.pk).order_by("-pk").first()
    assert change is not None and change.user_name == "eddie"


def test_replacing_lists_replaced_and_deleted_profiles_and_checks_the_version(
    client: Client, editor: User, cluster: Any
) -> None:
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    for position, name in enumerate(("default-scheduler", "gone")):
        policies.ProfileService().create(
            {"configuration": configuration, "scheduler_name": name, "position": position},
            SYSTEM,
        )
    configuration.refresh_from_db()
    client.force_login(editor)
    page = client.get(f"/policies/configurations/import/?cluster={cluster.pk}")
    assert page.context["form"]["version"].value() == configuration.version
    form = {"cluster": str(cluster.pk), "document": DOCUMENT, "version": configuration.version}
    response = client.post("/policies/configurations/import/", {**form, "preview": "1"})
    plan = response.context["plan"]
    assert not plan.creates
    assert [(p.scheduler_name, p.action) for p in plan.profiles] == [
        ("default-scheduler", "replaces"),
        ("batch", "new"),
    ]
    assert [p.scheduler_name for p in plan.removed] == ["gone"]
    gone = SchedulerProfile.objects.get(scheduler_name="gone")
    assert plan.removed[0].pk == gone.pk and plan.removed[0].version == gone.version
    # Someone changes it meanwhile: the save is refused, the document is kept.
    policies.SchedulerConfigurationService().update(
        configuration.pk, {"parallelism": 2}, SYSTEM, expected_version=configuration.version
    )
    response = client.post("/policies/configurations/import/", {**form, "save": "1"})
    assert response.status_code == 409
    assert response.context["conflict"]
    assert response.context["form"]["document"].value() == DOCUMENT
    assert "Import over their change" in html_of(response)
    current = SchedulerConfiguration.objects.get()
    response = client.post(
        "/policies/configurations/import/",
        {**form, "version": current.version, "save": "1", "delete": [str(gone.pk)]},
    )
    assert response.status_code == 302
    assert sorted(SchedulerProfile.objects.values_list("scheduler_name", flat=True)) == [
        "batch",
        "default-scheduler",
    ]


def test_errors_name_the_field_and_line_and_keep_the_text(
    client: Client, editor: User, cluster: Any
) -> None:
    client.force_login(editor)
    url = "/policies/configurations/import/"
    response = client.post(url, {"cluster": cluster.pk, "document": BAD, "save": "1"})
    assert response.status_code == 400
    [(where, message)] = response.context["problems"]
    assert where == "line 9, profiles[0].plugins.filter.enabled[1]"
    assert message == 'FilterPlugin "Nope" does not exist'
    assert response.context["form"]["document"].value() == BAD
    assert html_of(response).count("<title>Error: ") == 1
    # Not YAML at all: the parser's line; the wrong kind; nothing given.
    response = client.post(url, {"cluster": cluster.pk, "document": "a: [1", "preview": "1"})
    assert response.status_code == 400
    assert "line 1, column 6" in response.context["problems"][0][1]
    response = client.post(
        url, {"cluster": cluster.pk, "document": "apiVersion: v1\nkind: Pod", "preview": "1"}
    )
    assert 'no kind "Pod"' in response.context["problems"][0][1]
    response = client.post(url, {"cluster": cluster.pk, "document": "  ", "preview": "1"})
    assert response.status_code == 400
    assert response.context["form"].errors["document"]
    response = client.post(
        url,
        {
            "cluster": cluster.pk,
            "document": "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\nparallelism: lots\n",
            "preview": "1",
        },
    )
    assert response.context["problems"] == [
        ("line 3, parallelism", "cannot unmarshal string into int32")
    ]
    assert not SchedulerConfiguration.objects.exists()


def test_a_file_fills_the_box(client: Client, editor: User, cluster: Any) -> None:
    client.force_login(editor)
    upload = SimpleUploadedFile("scheduler.yaml", DOCUMENT.encode(), "application/yaml")
    response = client.post(
        "/policies/configurations/import/",
        {"cluster": cluster.pk, "document": "", "upload": upload, "preview": "1"},
    )
    assert response.status_code == 200
    assert response.context["form"]["document"].value() == DOCUMENT
    assert response.context["plan"].profiles
    binary = SimpleUploadedFile("x.bin", b"\xff\xfe\x00", "application/octet-stream")
    response = client.post(
        "/policies/configurations/import/",
        {"cluster": cluster.pk, "document": "kept", "upload": binary, "preview": "1"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["upload"] == ["The file is not UTF-8 text."]
    assert response.context["form"]["document"].value() == "kept"


def test_an_unnamed_profile_is_not_the_same_as_a_named_default_scheduler(
    client: Client, editor: User, cluster: Any
) -> None:
    """As the service matches profiles (by schedulerName as stored), so does the preview."""
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    policies.ProfileService().create({"configuration": configuration}, SYSTEM)
    configuration.refresh_from_db()
    client.force_login(editor)
    response = client.post(
        "/policies/configurations/import/",
        {
            "cluster": cluster.pk,
            "document": DOCUMENT,
            "version": configuration.version,
            "preview": "1",
        },
    )
    plan = response.context["plan"]
    assert plan.profiles[0].action == "new"
    assert [p.scheduler_name for p in plan.removed] == ["default-scheduler (schedulerName not set)"]


def test_hostile_documents_are_errors_not_crashes(
    client: Client, editor: User, cluster: Any
) -> None:
    client.force_login(editor)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    deep = "a: " + "[" * 5000 + "]" * 5000
    for text in (bomb, deep, "\x00\x01", "---\na: 1\n---\nb: 2\n", '{"kind": 1}'):
        response = client.post(
            "/policies/configurations/import/",
            {"cluster": cluster.pk, "document": text, "preview": "1"},
        )
        assert response.status_code == 400, text[:20]
        assert response.context["problems"] or response.context["form"].errors
        assert response.context["form"]["document"].value() == text
    assert client.get("/policies/configurations/import/").status_code == 404
    assert client.get("/policies/configurations/import/?cluster=999").status_code == 404


def test_deleting_profiles_needs_each_one_confirmed(
    client: Client, editor: User, cluster: Any
) -> None:
    """An import that deletes profiles saves only once each deletion is ticked; afterwards the
    deleted profile's and its LoadAware args' history pages still answer."""
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    for position, name in enumerate(("default-scheduler", "gone", "old")):
        policies.ProfileService().create(
            {"configuration": configuration, "scheduler_name": name, "position": position},
            SYSTEM,
        )
    gone = SchedulerProfile.objects.get(scheduler_name="gone")
    old = SchedulerProfile.objects.get(scheduler_name="old")
    args = policies.LoadAwareArgsService().create(
        {"profile": gone, "usage_thresholds": {"cpu": 65}}, SYSTEM
    )
    configuration.refresh_from_db()
    client.force_login(editor)
    url = "/policies/configurations/import/"
    form = {"cluster": str(cluster.pk), "document": DOCUMENT, "version": configuration.version}

    preview = html_of(client.post(url, {**form, "preview": "1"}))
    assert "This import deletes 2 profiles" in preview
    assert f'name="delete" value="{gone.pk}"' in preview
    assert f'name="delete" value="{old.pk}"' in preview
    assert "Import, deleting 2 profiles" in preview
    assert f"/policies/loadaware/{args.pk}/history/" in preview

    # Saving without ticking, or ticking only one: refused, nothing saved, the ticks kept.
    for ticked, missing in (([], "gone, old"), ([str(gone.pk)], "old")):
        response = client.post(url, {**form, "save": "1", "delete": ticked})
        assert response.status_code == 400
        html = html_of(response)
        assert "tick each one to confirm deleting it" in html
        assert f"(not ticked: {missing})" in html
        assert SchedulerProfile.objects.filter(pk__in=[gone.pk, old.pk]).count() == 2
    assert f'value="{gone.pk}" form="import-form" checked' in html

    response = client.post(url, {**form, "save": "1", "delete": [str(gone.pk), str(old.pk)]})
    assert response.status_code == 302
    assert not SchedulerProfile.objects.filter(pk__in=[gone.pk, old.pk]).exists()
    assert not LoadAwareSchedulingArgs.objects.filter(pk=args.pk).exists()

    # The deleted objects' history stays readable; their pages redirect there.
    for kind, pk, name in (("profiles", gone.pk, "gone"), ("loadaware", args.pk, "gone")):
        history = client.get(f"/policies/{kind}/{pk}/history/")
        assert history.status_code == 200
        text = html_of(history)
        assert "(deleted)" in text and 'id="deleted-notice"' in text and name in text
        assert "Revert to" not in text
        detail = client.get(f"/policies/{kind}/{pk}/")
        assert detail.status_code == 302
        assert detail["Location"] == f"/policies/{kind}/{pk}/history/"
    assert client.get("/policies/profiles/999999/history/").status_code == 404
