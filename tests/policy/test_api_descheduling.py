"""koord-descheduler's configuration and koordlet's thresholds as stored from a refresh, read
over the API: the document as written, LowNodeLoad's dry run on the newest snapshot, and the
coherence findings of the stack (Koordinator's v1.7 chart with LowNodeLoad enabled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.accounts.changes import ChangeContext
from policy.accounts.models import PolicyChange
from policy.clusters.models import Cluster
from policy.clusters.services import record_snapshot
from policy.policies import descheduler
from policy.policies import services as policies
from policy.policies.models import DeschedulerConfiguration
from tests.scoring.test_descheduler import FIXTURES, NOW, cluster

pytestmark = pytest.mark.django_db

SCHEDULER = Path(__file__).parents[1] / "scoring" / "fixtures" / "scheduler-configs"
CHART = (FIXTURES / "koord-descheduler-config-v1.7.0-lownodeload.yaml").read_text()
KOORDLET = '{"clusterStrategy": {"enable": true, "memoryEvictThresholdPercent": 70}}'


@pytest.fixture
def stack() -> Cluster:
    """A cluster as a refresh leaves it: snapshot, scheduler configuration, both documents."""
    c = Cluster.objects.create(name="stack", kind="demo")
    record_snapshot(c, cluster(), NOW)
    text = (SCHEDULER / "koordinator-v1.7.0-v1.yaml").read_text()
    policies.SchedulerConfigurationService().adopt(c, text, ChangeContext.system())
    descheduler.adopt_descheduler(c, CHART, NOW)
    descheduler.adopt_koordlet(c, KOORDLET, NOW)
    return c


@pytest.fixture
def client(api_client: Any, viewer: User) -> Any:
    api_client.force_login(viewer)
    return api_client


def test_adoption_keeps_the_text_and_records_only_new_texts(stack: Cluster) -> None:
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    assert row.source == CHART
    assert row.configmap == "koordinator-system/koord-descheduler-config:koord-descheduler-config"
    assert descheduler.adopt_descheduler(stack, CHART, NOW) is None
    changed = CHART.replace("memory: 80", "memory: 85")
    assert descheduler.adopt_descheduler(stack, changed, NOW) is not None
    row.refresh_from_db()
    assert row.version == 2 and row.source == changed
    history = PolicyChange.objects.filter(
        object_id=row.pk, content_type__model="deschedulerconfiguration"
    )
    assert [c.action for c in history.order_by("id")] == ["create", "update"]


def test_list_detail_and_render_unchanged(client: Any, stack: Cluster) -> None:
    listed = client.get("/api/v1/descheduler-configurations/", {"cluster": stack.pk}).json()
    (item,) = listed["results"]
    assert item["valid"] and item["lownodeload_enabled"] and item["validation_errors"] == []
    (pool,) = item["lownodeload"]["node_pools"]
    assert pool["name"] == "__default_node_pool__"
    assert pool["high_thresholds"] == {"cpu": 75.0, "memory": 80.0}
    rendered = client.get(f"/api/v1/descheduler-configurations/{item['id']}/render/").json()
    assert rendered["text"] == CHART
    assert (rendered["namespace"], rendered["name"], rendered["key"]) == (
        "koordinator-system",
        "koord-descheduler-config",
        "koord-descheduler-config",
    )


def test_invalid_document_is_kept_and_its_errors_named(client: Any, stack: Cluster) -> None:
    bad = CHART.replace("cpu: 45", "cpu: 95")
    descheduler.adopt_descheduler(stack, bad, NOW)
    item = client.get("/api/v1/descheduler-configurations/", {"cluster": stack.pk}).json()[
        "results"
    ][0]
    assert not item["valid"]
    assert item["validation_errors"] == [
        {
            "field": "profiles[0].pluginConfig[1].args.nodePools[0].lowThresholds[cpu]",
            "type": "FieldValueInvalid",
            "detail": "low percentage must be less than or equal to highThresholds",
        }
    ]
    rendered = client.get(f"/api/v1/descheduler-configurations/{item['id']}/render/").json()
    assert rendered["text"] == bad


def test_lownodeload_marks_over_the_nodes_above_high_and_places_their_pods(
    client: Any, stack: Cluster
) -> None:
    body = client.get(f"/api/v1/clusters/{stack.pk}/lownodeload/").json()
    assert body["enabled"] and body["configuration"]["valid"]
    states = {n["node"]: n["state"] for n in body["nodes"]}
    assert states == {"hot": "over", "cold": "under", "warm": "normal", "stale": "skipped"}
    over = [
        n["node"]
        for n in body["nodes"]
        if any(
            r["usage"] is not None and r["high"] is not None and r["usage"] > r["high"]
            for r in n["resources"].values()
        )
    ]
    assert body["over"] == over == ["hot"]
    (eviction,) = body["evictions"]
    assert eviction["pod"] == "default/batch" and eviction["node"] == "hot"
    assert eviction["placed_on"] in ("cold", "warm") and eviction["placement_error"] is None


def test_coherence_names_both_planted_contradictions(client: Any, stack: Cluster) -> None:
    findings = client.get(f"/api/v1/clusters/{stack.pk}/coherence/").json()["findings"]
    by_rule = {f["rule"]: f for f in findings}
    loadaware, lownodeload = by_rule["R1"]["values"]
    assert (loadaware["field"], loadaware["value"]) == ("usageThresholds[memory]", 95)
    assert "LoadAwareScheduling args" in loadaware["source"]
    assert lownodeload["value"] == 80.0
    assert (
        lownodeload["source"]
        == "koordinator-system/koord-descheduler-config:koord-descheduler-config"
    )
    assert lownodeload["field"] == "profiles[0].pluginConfig[1].args.highThresholds[memory]"
    _, koordlet = by_rule["R3"]["values"]
    assert koordlet["value"] == 70
    assert koordlet["source"] == (
        "koordinator-system/slo-controller-config:resource-threshold-config (clusterStrategy)"
    )
    assert by_rule["R3"]["nodes"] == ["cold", "hot", "stale", "warm"]


def test_no_snapshot_is_a_404_naming_the_cluster(client: Any) -> None:
    empty = Cluster.objects.create(name="empty", kind="demo")
    response = client.get(f"/api/v1/clusters/{empty.pk}/lownodeload/")
    assert response.status_code == 404 and "empty" in response.json()["detail"]


def test_dashboard_panel_beside_loadaware(stack: Cluster, viewer: User) -> None:
    from django.test import Client

    client = Client()
    client.force_login(viewer)
    page = client.get(f"/?cluster={stack.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    panel = html[html.index('id="lownodeload-heading"') : html.index('id="util-heading"')]
    assert "1 over, 1 normal, 1 under, 1 skipped" in panel
    assert ">hot</a>" in panel
    assert "R1 (error)" in panel and "R3 (error)" in panel
    assert "koord-scheduler LoadAwareScheduling: usageThresholds[memory] = 95" in panel
    assert "koordlet BEMemoryEvict: clusterStrategy.memoryEvictThresholdPercent = 70" in panel
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    assert f'href="/descheduler/{row.pk}/lownodeload/">Fix in the LowNodeLoad editor' in panel


def test_dashboard_says_when_lownodeload_is_off(stack: Cluster, viewer: User) -> None:
    from django.test import Client

    descheduler.adopt_descheduler(
        stack, (FIXTURES / "koord-descheduler-config-v1.7.0.yaml").read_text(), NOW
    )
    client = Client()
    client.force_login(viewer)
    html = client.get(f"/?cluster={stack.pk}").content.decode()
    assert "Not enabled: no profile of" in html
    assert "R3 (error)" in html and "R1 (error)" not in html


def test_demo_cluster_carries_the_charts_documents(client: Any, demo_snapshot: Any) -> None:
    from policy.policies import koordinator_chart
    from policy.policies.demo import seed_demo_policies

    fixture = CHART.split("\n", 2)[2]  # the file's two comment lines aside
    assert fixture == koordinator_chart.DESCHEDULER_CONFIG
    shipped = (FIXTURES / "slo-controller-config-v1.7.0.json").read_text()
    assert shipped == koordinator_chart.RESOURCE_THRESHOLD_CONFIG
    cluster_id = demo_snapshot.cluster_id
    assert seed_demo_policies(Cluster.objects.get(pk=cluster_id))
    body = client.get(f"/api/v1/clusters/{cluster_id}/lownodeload/").json()
    assert body["enabled"] and body["configuration"]["valid"]
    assert len(body["nodes"]) == 12
    rules = {f["rule"] for f in body["findings"]}
    assert {"R1", "R3"} <= rules


def _leaves(text: str) -> dict[str, Any]:
    from scoring.config.dump import leaves
    from scoring.descheduler.config import parse_document

    return dict(leaves(parse_document(text)))


def test_editing_one_lownodeload_threshold_changes_exactly_that_leaf(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    from policy.sync.models import ClusterSyncState
    from policy.sync.planners import desired_state

    api_client.force_login(editor)
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/"
    read = api_client.get(url)
    assert read.json()["args"]["highThresholds"] == {"cpu": 75, "memory": 80}
    patch = {"highThresholds": {"memory": 90}}
    assert api_client.patch(url, patch, format="json").status_code == 428
    stale = api_client.patch(url, patch, format="json", HTTP_IF_MATCH='W/"9"')
    assert stale.status_code == 412
    done = api_client.patch(url, patch, format="json", HTTP_IF_MATCH=read["ETag"])
    assert done.status_code == 200, done.content
    assert done["ETag"] == 'W/"2"' and done.json()["edited"]
    row.refresh_from_db()
    before, after = _leaves(CHART), _leaves(row.source)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {"profiles[0].pluginConfig[1].args.highThresholds.memory"}
    assert after["profiles[0].pluginConfig[1].args.highThresholds.memory"] == 90
    # A refresh that still finds the old text leaves the edit; the next push writes it.
    assert descheduler.adopt_descheduler(stack, CHART, NOW) is None
    state, _ = ClusterSyncState.objects.get_or_create(cluster=stack)
    assert desired_state(stack, state).descheduler_config == row.source
    history = api_client.get(f"/api/v1/descheduler-configurations/{row.pk}/history/").json()
    assert [h["message"] for h in history][:1] == ["LowNodeLoad args edited"]
    assert history[0]["user"] == editor.username


def test_an_edit_koord_descheduler_would_refuse_is_a_400_naming_the_field(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    api_client.force_login(editor)
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/"
    response = api_client.patch(
        url, {"lowThresholds": {"memory": 95}}, format="json", HTTP_IF_MATCH='W/"1"'
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "field": "profiles[0].pluginConfig[1].args.nodePools[0].lowThresholds[memory]",
            "type": "FieldValueInvalid",
            "detail": "low percentage must be less than or equal to highThresholds",
        }
    ]
    row.refresh_from_db()
    assert row.source == CHART and row.version == 1 and not row.edited


def test_viewers_read_the_args_but_cannot_edit(client: Any, stack: Cluster) -> None:
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/"
    assert client.get(url).status_code == 200
    denied = client.patch(url, {"dryRun": True}, format="json", HTTP_IF_MATCH="*")
    assert denied.status_code == 403


def test_preview_says_which_findings_an_edit_resolves_or_creates(
    client: Any, stack: Cluster
) -> None:
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/preview/"
    body = client.post(url, {"highThresholds": {"memory": 96}}, format="json").json()
    assert body["over_before"] == ["hot"] and body["over_after"] == []
    # R1 (95 > 80) goes; R2 (95 < 96) comes; R4 stays, with LowNodeLoad's new value.
    assert sorted(f["rule"] for f in body["resolves"]) == ["R1", "R4"]
    created = {f["rule"]: f for f in body["creates"]}
    assert sorted(created) == ["R2", "R4"]
    assert created["R2"]["values"][1]["value"] == 96.0
    assert created["R4"]["values"][1]["value"] == 96.0
    row.refresh_from_db()
    assert row.version == 1 and row.source == CHART  # nothing saved
    refused = client.post(url, {"lowThresholds": {"cpu": 99}}, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"].endswith("lowThresholds[cpu]")


def test_editor_rows_preview_and_save_change_only_the_edited_cell(
    stack: Cluster, editor: User
) -> None:
    from django.test import Client

    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/descheduler/{row.pk}/lownodeload/"
    client = Client()
    client.force_login(editor)
    page = client.get(url).content.decode()
    assert 'name="top-highThresholds-memory" value="80"' in page
    assert 'name="top-lowThresholds-cpu" value="45"' in page
    form = {
        "version": "1",
        "top-lowThresholds-cpu": "45",
        "top-lowThresholds-memory": "55",
        "top-highThresholds-cpu": "75",
        "top-highThresholds-memory": "96",
        "top-prodLowThresholds-cpu": "",
        "top-prodHighThresholds-memory": "",
    }
    preview = client.post(url, {**form, "action": "preview"}).content.decode()
    assert "Above high after</dt><dd>none" in preview
    row.refresh_from_db()
    assert row.version == 1
    saved = client.post(url, {**form, "action": "save"})
    assert saved.status_code == 302
    row.refresh_from_db()
    before, after = _leaves(CHART), _leaves(row.source)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {"profiles[0].pluginConfig[1].args.highThresholds.memory"}
    stale = client.post(url, {**form, "top-highThresholds-memory": "97", "action": "save"})
    assert "changed since you opened it (now version 2)" in stale.content.decode()
    refused = client.post(
        url, {**form, "version": "2", "top-lowThresholds-cpu": "99", "action": "save"}
    ).content.decode()
    assert "low percentage must be less than or equal to highThresholds" in refused
    assert 'name="top-lowThresholds-cpu" value="99"' in refused


def test_editor_settings_change_only_the_settings_edited(stack: Cluster, editor: User) -> None:
    """The args' scalars (paused, dryRun, numberOfNodes, the anomaly condition, ...) as
    written; a save writes only those that changed, an emptied one is removed, and a value
    koord-descheduler refuses is named."""
    from django.test import Client

    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/descheduler/{row.pk}/lownodeload/"
    client = Client()
    client.force_login(editor)
    page = client.get(url).content.decode()
    assert '<option value="" selected>Not set (default: true)</option>' in page  # nodeFit
    assert 'name="setting-numberOfNodes" value=""' in page
    unchanged = {f"setting-{name}": "" for name in ("paused", "dryRun", "numberOfNodes")}
    assert client.post(url, {"version": "1", **unchanged, "action": "save"}).status_code == 200
    row.refresh_from_db()
    assert row.version == 1  # nothing changed, nothing saved
    form = {
        "version": "1",
        "setting-dryRun": "true",
        "setting-numberOfNodes": "2",
        "setting-anomalyCondition.consecutiveAbnormalities": "1",
        "setting-detectorCacheTimeout": "",
        "action": "save",
    }
    assert client.post(url, form).status_code == 302
    row.refresh_from_db()
    before, after = _leaves(CHART), _leaves(row.source)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    args = "profiles[0].pluginConfig[1].args"
    assert changed == {
        f"{args}.dryRun",
        f"{args}.numberOfNodes",
        f"{args}.anomalyCondition.consecutiveAbnormalities",
    }
    assert after[f"{args}.dryRun"] is True and after[f"{args}.numberOfNodes"] == 2
    page = client.get(url).content.decode()
    assert 'name="setting-numberOfNodes" value="2"' in page
    cleared = client.post(url, {"version": "2", "setting-numberOfNodes": "", "action": "save"})
    assert cleared.status_code == 302
    row.refresh_from_db()
    assert f"{args}.numberOfNodes" not in _leaves(row.source)
    typo = client.post(url, {"version": "3", "setting-numberOfNodes": "two", "action": "save"})
    assert "numberOfNodes: &#x27;two&#x27; is not a whole number" in typo.content.decode()
    refused = client.post(
        url, {"version": "3", "setting-nodeMetricExpirationSeconds": "0", "action": "save"}
    ).content.decode()
    assert "nodeMetricExpirationSeconds" in refused and "Not saved" in refused
    assert 'name="setting-nodeMetricExpirationSeconds" value="0"' in refused  # kept as typed
    row.refresh_from_db()
    assert row.version == 3


def test_viewers_see_the_editor_read_only(stack: Cluster, viewer: User) -> None:
    from django.test import Client

    row = DeschedulerConfiguration.objects.get(cluster=stack)
    client = Client()
    client.force_login(viewer)
    page = client.get(f"/descheduler/{row.pk}/lownodeload/").content.decode()
    assert "readonly" in page and 'value="save"' not in page
    denied = client.post(f"/descheduler/{row.pk}/lownodeload/", {"version": "1"})
    assert denied.status_code == 403


def test_import_stores_a_document_as_written_for_the_next_push(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    api_client.force_login(editor)
    url = "/api/v1/descheduler-configurations/import/"
    shipped = (FIXTURES / "koord-descheduler-config-v1.7.0.yaml").read_text()
    assert (
        api_client.post(url, {"cluster": stack.pk, "document": shipped}, format="json").status_code
        == 428
    )
    done = api_client.post(
        url, {"cluster": stack.pk, "document": shipped}, format="json", HTTP_IF_MATCH='W/"1"'
    )
    assert done.status_code == 200, done.content
    assert done.json()["source"] == shipped and not done.json()["lownodeload_enabled"]
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    assert row.edited and row.version == 2
    bad = shipped.replace("profiles:", "profile:")
    refused = api_client.post(
        url, {"cluster": stack.pk, "document": bad}, format="json", HTTP_IF_MATCH="*"
    )
    assert refused.status_code == 400
    fields = {e["field"] for e in refused.json()["errors"]}
    assert fields == {"profile", "profiles"}
    other = Cluster.objects.create(name="other", kind="demo")
    created = api_client.post(url, {"cluster": other.pk, "document": shipped}, format="json")
    assert created.status_code == 201


def test_coherence_says_when_loadaware_refuses_every_node(client: Any) -> None:
    c = Cluster.objects.create(name="full", kind="demo")
    fresh = [o for o in cluster() if (o.get("metadata") or {}).get("name") != "stale"]
    record_snapshot(c, fresh, NOW)
    text = (SCHEDULER / "koordinator-v1.7.0-v1.yaml").read_text()
    tight = text.replace(
        "          cpu: 65\n          memory: 95", "          cpu: 1\n          memory: 1", 1
    )
    assert tight != text
    policies.SchedulerConfigurationService().adopt(c, tight, ChangeContext.system())
    findings = client.get(f"/api/v1/clusters/{c.pk}/coherence/").json()["findings"]
    (r5,) = [f for f in findings if f["rule"] == "R5"]
    assert r5["severity"] == "error" and "all 3 nodes" in r5["summary"]
    assert r5["values"][0]["value"] == {"cpu": 1, "memory": 1}


def test_an_edit_keeps_the_documents_comments_quotes_and_layout(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    shipped = (FIXTURES / "koord-descheduler-config-v1.7.0.yaml").read_text()
    assert descheduler.adopt_descheduler(stack, shipped, NOW) is not None
    api_client.force_login(editor)
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/"
    patch = {"highThresholds": {"memory": 85}}
    done = api_client.patch(url, patch, format="json", HTTP_IF_MATCH="*")
    assert done.status_code == 200, done.content
    row.refresh_from_db()
    before, after = shipped.splitlines(), row.source.splitlines()
    assert len(before) == len(after)
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    assert [(old.strip(), new.strip()) for old, new in changed] == [("memory: 80", "memory: 85")]
    assert "    # disable LowNodeLoad by default" in after and '      evictQPS: "10"' in after
    # A new key cannot be written in place: the document is written again, comments kept.
    added = {"nodeMetricExpirationSeconds": 300}
    again = api_client.patch(url, added, format="json", HTTP_IF_MATCH="*")
    assert again.status_code == 200, again.content
    row.refresh_from_db()
    assert "    # disable LowNodeLoad by default" in row.source.splitlines()
    assert "nodeMetricExpirationSeconds: 300" in row.source
    assert row.source.startswith(shipped.splitlines()[0])  # the chart's header comment


def test_an_edit_of_a_json_document_stays_json(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    import json

    import yaml

    written = json.dumps(yaml.safe_load(CHART))
    assert descheduler.adopt_descheduler(stack, written, NOW) is not None
    api_client.force_login(editor)
    row = DeschedulerConfiguration.objects.get(cluster=stack)
    url = f"/api/v1/descheduler-configurations/{row.pk}/lownodeload-args/"
    done = api_client.patch(
        url, {"highThresholds": {"memory": 85}}, format="json", HTTP_IF_MATCH="*"
    )
    assert done.status_code == 200, done.content
    row.refresh_from_db()
    stored = json.loads(row.source)  # still JSON, not YAML
    args = stored["profiles"][0]["pluginConfig"][1]["args"]
    assert args["highThresholds"] == {"cpu": 75, "memory": 85}


def test_a_loadaware_edit_says_which_findings_it_resolves_or_creates(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    """Admitting memory only up to 65 % (under LowNodeLoad's high 80 % and koordlet's
    eviction at 70 %) resolves R1 and R3 and creates R2 (LowNodeLoad counts headroom LoadAware
    refuses); at 75 % R3 stands with the new value."""
    from policy.policies.models import LoadAwareSchedulingArgs

    args = LoadAwareSchedulingArgs.objects.get(profile__configuration__cluster=stack)
    api_client.force_login(editor)
    url = f"/api/v1/loadaware-args/{args.pk}/impact/"
    lowered = api_client.post(url, {"usage_thresholds": {"cpu": 65, "memory": 65}}, format="json")
    assert lowered.status_code == 200, lowered.content
    findings = lowered.json()["findings"]
    assert sorted(f["rule"] for f in findings["resolves"]) == ["R1", "R3"]
    [headroom] = findings["creates"]  # LowNodeLoad now counts headroom LoadAware refuses
    assert headroom["rule"] == "R2" and "refuses above 65 %" in headroom["summary"]
    partly = api_client.post(url, {"usage_thresholds": {"cpu": 65, "memory": 75}}, format="json")
    moved = partly.json()["findings"]
    assert sorted(f["rule"] for f in moved["resolves"]) == ["R1", "R3"]
    created = {f["rule"]: f for f in moved["creates"]}
    assert sorted(created) == ["R2", "R3"] and created["R3"]["values"][0]["value"] == 75
    unchanged = api_client.post(url, {}, format="json").json()["findings"]
    assert unchanged == {"resolves": [], "creates": []}


def test_the_loadaware_editor_preview_names_the_findings(
    client: Any, editor: User, stack: Cluster
) -> None:
    from django.test import Client

    from policy.policies.models import LoadAwareSchedulingArgs
    from tests.policy.test_pages_policies import args_data

    args = LoadAwareSchedulingArgs.objects.get(profile__configuration__cluster=stack)
    page = Client()
    page.force_login(editor)
    response = page.post(
        f"/policies/loadaware/{args.pk}/edit/",
        args_data(args, usage_thresholds={"cpu": "65", "memory": "65"}, preview="1"),
    )
    assert response.status_code == 200, response.content
    shown = response.context["preview"].impact["findings"]
    assert sorted(f["rule"] for f in shown["resolves"]) == ["R1", "R3"]
    html = response.content.decode()
    line = html.split('data-impact="findings">', 1)[1].split("</li>", 1)[0]
    assert "resolves <strong>R1</strong>" in line and "creates" in line


def test_a_threshold_policy_says_which_findings_its_annotations_resolve_or_create(
    api_client: Any, editor: User, stack: Cluster
) -> None:
    """Annotating every node with memory 60 % (once pushed) takes each node's LoadAware
    threshold under LowNodeLoad's high and koordlet's eviction: R1 and R3 resolved, R2 made."""
    api_client.force_login(editor)
    body = {
        "cluster": stack.pk,
        "name": "cool",
        "node_selector": {},
        "usage_thresholds": {"cpu": 65, "memory": 60},
    }
    answer = api_client.post("/api/v1/node-threshold-policies/impact/", body, format="json")
    assert answer.status_code == 200, answer.content
    findings = answer.json()["findings"]
    assert sorted(f["rule"] for f in findings["resolves"]) == ["R1", "R3"]
    assert [f["rule"] for f in findings["creates"]] == ["R2"]
    assert answer.json()["annotations_changed"] == ["cold", "hot", "stale", "warm"]
