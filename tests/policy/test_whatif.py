"""What-if comparisons: input checks naming fields, the run as a job, the pages and roles."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from policy.clusters.engine import engine_for, snapshot_for
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import WhatIfStatus
from policy.decisions import whatif
from policy.decisions.models import WhatIfRun
from policy.policies.demo import seed_demo_policies
from policy.policies.models import NodeThresholdPolicy, SchedulerConfiguration
from policy.web.forms.whatif import SAMPLE_WORKLOAD
from scoring.config import validate_configuration
from scoring.loading import flatten, parse_documents
from scoring.objects import parse_pod
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from scoring.simulation.compare import differences, what_if
from scoring.simulation.workload import expand_workload, workload_controllers

# Comparisons run in-process even when a broker is configured (tests/sync has the worker test).
pytestmark = pytest.mark.usefixtures("celery_eager")

STORED = whatif.ConfigurationInput("stored")
DEFAULTS = whatif.ConfigurationInput("defaults")
PACKING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
"""


@pytest.fixture
def cluster(demo_snapshot: ClusterSnapshot) -> Cluster:
    seed_demo_policies(demo_snapshot.cluster)
    return demo_snapshot.cluster


def start(cluster: Cluster, **kwargs: Any) -> WhatIfRun:
    values: dict[str, Any] = {
        "workload_source": "manifests",
        "workload": SAMPLE_WORKLOAD,
        "baseline": STORED,
        "candidate": DEFAULTS,
        **kwargs,
    }
    return whatif.start(cluster, **values)


def errors_of(cluster: Cluster, **kwargs: Any) -> dict[str, list[str]]:
    with pytest.raises(whatif.WhatIfInvalid) as caught:
        start(cluster, **kwargs)
    return caught.value.errors


def test_invalid_inputs_name_the_field_and_the_rule(cluster: Cluster) -> None:
    bad_config = whatif.ConfigurationInput("custom", PACKING.replace("MostAllocated", "Most"))
    assert errors_of(cluster, candidate=bad_config) == {
        "candidate": [
            "profiles[0].pluginConfig[0].args.scoringStrategy.type: supported values: "
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ]
    }
    errors = errors_of(
        cluster, workload="kind: [", candidate=whatif.ConfigurationInput("custom", "")
    )
    assert set(errors) == {"workload", "candidate"}  # every field at once
    assert "not valid JSON or YAML" in errors["workload"][0]
    assert errors["candidate"] == ["paste a KubeSchedulerConfiguration"]
    assert (
        "no pods"
        in errors_of(cluster, workload="kind: ConfigMap\nmetadata: {name: x}")["workload"][0]
    )
    wrong_scheduler = SAMPLE_WORKLOAD.replace(
        "      containers:", "      schedulerName: x\n      containers:"
    )
    # A pod whose schedulerName no profile has is no input error: it stays pending (below).
    assert start(cluster, workload=wrong_scheduler).pk is not None


def test_the_pod_limit_is_enforced(cluster: Cluster, settings: Any) -> None:
    settings.WHATIF_MAX_PODS = 39
    assert errors_of(cluster)["workload"] == ["more than 39 pods: at most 39 per comparison"]
    huge = SAMPLE_WORKLOAD.replace("replicas: 40", "replicas: 1000000000")
    assert errors_of(cluster, workload=huge)["workload"][0].startswith("more than 39 pods")
    settings.WHATIF_MAX_PODS = 11
    assert "12 pods; at most 11" in errors_of(cluster, workload_source="pending")["workload"][0]


def test_a_cluster_without_stored_configuration_cannot_use_it(
    demo_snapshot: ClusterSnapshot,
) -> None:
    assert errors_of(demo_snapshot.cluster) == {
        "baseline": ["cluster demo has no stored scheduler configuration"]
    }


def test_a_run_matches_the_engine_on_the_same_inputs(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = start(cluster, candidate=whatif.ConfigurationInput("custom", PACKING, "pack"))
    run.refresh_from_db()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error
    assert (run.progress_done, run.progress_total, run.pod_count) == (80, 80, 40)
    assert run.labels() == (f"stored configuration v{_version(cluster)}", "pack")

    stored = ClusterSnapshot.snapshots.get(pk=run.snapshot_id)
    objects = list(flatten(parse_documents(SAMPLE_WORKLOAD, "w"), "w"))
    pods = [parse_pod(m) for m in expand_workload(objects)]
    # As `simulate` does: the workload's ReplicaSets join the cluster, so the default spreading
    # constraints select the replicas.
    cluster_then = snapshot_for(stored).copy()
    cluster_then.add_cluster_objects(workload_controllers(objects))
    engines = [engine_for(run.baseline), engine_for(run.candidate)]
    expected = what_if(cluster_then, pods, stored.taken_at, [("a", engines[0]), ("b", engines[1])])
    result = run.result
    assert [r["placed"] for r in result["runs"]] == [e.placed for e in expected]
    moved = differences(*expected)
    assert result["differenceCount"] == len(moved) > 0  # spreading vs packing differ
    assert result["differences"][0] == {**moved[0].to_dict(), "pending": [False, False]}
    for side in [result["before"], *result["runs"]]:
        assert sum(side["distribution"]["cpu"]) == stored.node_count
    for side, run_ in zip(result["runs"], expected, strict=True):
        bins = side["podsPerNode"]
        assert sum(bins) == stored.node_count
        per_node = [
            sum(1 for p in run_.placements if p.node == n) for n in run_.snapshot.node_names
        ]
        assert bins == [sum(1 for n in per_node if min(n, 10) == k) for k in range(11)]
    # LoadAware is in the stored configuration only.
    assert result["runs"][0]["utilization"]["cpu"]["overThreshold"] is not None
    assert result["runs"][1]["utilization"]["cpu"]["overThreshold"] is None


def _version(cluster: Cluster) -> int:
    return SchedulerConfiguration.objects.get(cluster=cluster).version


def test_pending_pods_of_the_snapshot_are_a_workload(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        # The demo's pending pods ask for two profiles, which the defaults do not have.
        run = start(cluster, workload_source="pending", workload="ignored", candidate=STORED)
    run.refresh_from_db()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error
    assert run.pod_count == ClusterSnapshot.snapshots.get(pk=run.snapshot_id).pending_pod_count
    assert run.workload == ""
    assert run.result["differenceCount"] == 0  # the same configuration places alike
    assert [side["pending"] for side in run.result["runs"]] == [0, 0]


def test_pods_without_a_profile_stay_pending_as_kube_scheduler_leaves_them(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    """The demo's pending pods ask for profiles the defaults lack: kube-scheduler would ignore
    those pods (they stay Pending), so the run counts them pending on that side, with why."""
    with django_capture_on_commit_callbacks(execute=True):
        run = start(cluster, workload_source="pending", workload="", candidate=DEFAULTS)
    run.refresh_from_db()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error
    snapshot = snapshot_for(ClusterSnapshot.snapshots.get(pk=run.snapshot_id))
    others = {p.scheduler_name for p in snapshot.pending} - {"default-scheduler"}
    expected = sum(1 for p in snapshot.pending if p.scheduler_name in others)
    assert others and expected
    stored_side, defaults_side = run.result["runs"]
    assert stored_side["pending"] == 0 and stored_side["pendingReasons"] == []
    assert defaults_side["pending"] == expected
    assert defaults_side["placed"] + defaults_side["unschedulable"] + expected == run.pod_count
    assert {r["reason"] for r in defaults_side["pendingReasons"]} == {
        f"no profile for schedulerName {name}" for name in others
    }
    assert sum(r["pods"] for r in defaults_side["pendingReasons"]) == expected
    # Not counted among the pods a profile found no node for.
    assert all("no profile" not in r["reason"] for r in defaults_side["reasons"])
    moved = [d for d in run.result["differences"] if d["pending"] == [False, True]]
    assert moved and all(d["nodes"][1] is None for d in moved)


def test_a_run_is_claimed_once_and_a_cancelled_one_stops(cluster: Cluster) -> None:
    run = start(cluster)  # not executed: no on-commit callbacks ran
    assert whatif.claim(run.pk, "w1") and not whatif.claim(run.pk, "w2")
    progress = whatif._Progress(run.pk)
    progress(3, force=True)
    assert WhatIfRun.objects.get(pk=run.pk).progress_done == 3
    assert whatif.cancel(run) and not whatif.cancel(run)
    with pytest.raises(whatif.Cancelled):
        progress(4, force=True)
    assert whatif.execute(run.pk) is None  # nothing left to claim
    run.refresh_from_db()
    assert (run.status, run.progress_done) == (WhatIfStatus.CANCELLED, 3)


def test_recovery_resends_lost_runs_and_fails_stalled_ones(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    lost = start(cluster)  # its message never reached a worker
    stalled = start(cluster)
    assert whatif.claim(stalled.pk, "gone")
    fresh = start(cluster)
    later = timezone.now() + timedelta(seconds=whatif.STALLED_AFTER + 1)
    WhatIfRun.objects.filter(pk=fresh.pk).update(created=later)
    assert whatif.recover(later) == {"resent": [lost.pk], "failed": [stalled.pk]}
    for run in (lost, stalled, fresh):
        run.refresh_from_db()
    assert lost.status == WhatIfStatus.SUCCEEDED  # sent again: the eager worker ran it
    assert stalled.status == WhatIfStatus.FAILED and "stopped reporting" in stalled.error
    assert fresh.status == WhatIfStatus.QUEUED  # not overdue yet


def test_a_run_whose_snapshot_went_fails_with_the_reason(cluster: Cluster) -> None:
    run = start(cluster)
    ClusterSnapshot.snapshots.filter(pk=run.snapshot_id).delete()
    assert whatif.execute(run.pk, "w") == WhatIfStatus.FAILED
    run.refresh_from_db()
    assert run.error == "snapshot: the starting snapshot was deleted; run it again"


# -- pages --------------------------------------------------------------------------------------


def page(client: Client, user: User, url: str, **kwargs: Any) -> Any:
    client.force_login(user)
    return client.get(url, **kwargs)


def form_data(cluster: Cluster, **overrides: str) -> dict[str, str]:
    return {
        "cluster": str(cluster.pk),
        "workload_source": "manifests",
        "workload": SAMPLE_WORKLOAD,
        "baseline_source": "stored",
        "baseline_label": "",
        "baseline_yaml": "",
        "candidate_source": "custom",
        "candidate_label": "pack",
        "candidate_yaml": PACKING,
        **overrides,
    }


def test_viewers_read_but_cannot_start(client: Client, viewer: User, cluster: Cluster) -> None:
    html = page(client, viewer, reverse("whatif-list")).content.decode()
    assert "Run the comparison" not in html and "needs the editor role" in html
    response = client.post(reverse("whatif-list"), form_data(cluster))
    assert response.status_code == 403
    assert not WhatIfRun.objects.exists()


def test_the_form_starts_with_the_stored_configuration_against_the_defaults(
    client: Client, editor: User, cluster: Cluster
) -> None:
    form = page(client, editor, reverse("whatif-list")).context["form"]
    assert form.initial["baseline_source"] == "stored"
    assert form.initial["candidate_source"] == "defaults"
    assert "LoadAwareScheduling" in form.initial["candidate_yaml"]  # ready to edit


def test_without_a_stored_configuration_the_form_offers_a_valid_sample(
    client: Client,
    editor: User,
    demo_snapshot: ClusterSnapshot,
    django_capture_on_commit_callbacks: Any,
) -> None:
    form = page(client, editor, reverse("whatif-list")).context["form"]
    assert (form.initial["baseline_source"], form.initial["candidate_source"]) == (
        "defaults",
        "custom",
    )
    data = {key: value for key, value in form.initial.items() if value is not None}
    data = {**data, "cluster": str(demo_snapshot.cluster_id)}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("whatif-list"), data)
    assert response.status_code == 302, response.context["form"].errors
    assert WhatIfRun.objects.get().status == WhatIfStatus.SUCCEEDED


def test_bad_input_is_shown_on_its_field_and_kept(
    client: Client, editor: User, cluster: Cluster
) -> None:
    client.force_login(editor)
    bad = PACKING.replace("MostAllocated", "Most")
    response = client.post(reverse("whatif-list"), form_data(cluster, candidate_yaml=bad))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["candidate_yaml"]
    assert "scoringStrategy.type: supported values" in errors["candidate_yaml"][0]
    html = response.content.decode()
    assert "scoringStrategy: {type: Most}" in html  # nothing is lost
    assert not WhatIfRun.objects.exists()
    # A summary at the top, focused on load, links to the field at fault.
    assert response.context["errors"] == [
        ("id_candidate_yaml", "Candidate (B): YAML", errors["candidate_yaml"][0])
    ]
    assert 'id="error-summary" autofocus' in html
    assert html.index('id="error-summary"') < html.index('class="card form whatif"')
    assert '<a href="#id_candidate_yaml">Candidate (B): YAML</a>' in html
    assert "<title>Error: What-if" in html


def test_every_error_is_on_its_field_and_in_the_summary(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    """Without a stored configuration, "stored" is wrong on the source field (there is no YAML
    at fault); a broken workload on the manifests; a missing profile is no error at all."""
    client.force_login(editor)
    data = form_data(
        demo_snapshot.cluster,
        workload="kind: [",
        candidate_source="custom",
        candidate_yaml="kind: Nope",
    )
    response = client.post(reverse("whatif-list"), data)
    errors = response.context["form"].errors
    assert set(errors) == {"baseline_source", "workload", "candidate_yaml"}
    summary = response.context["errors"]
    assert [(id_, label) for id_, label, _ in summary] == [
        ("id_workload", "Manifests (YAML or JSON, several documents or a List)"),
        ("id_baseline_source", "Baseline (A): Source"),
        ("id_candidate_yaml", "Candidate (B): YAML"),
    ]
    assert "has no stored scheduler configuration" in summary[1][2]
    assert not WhatIfRun.objects.exists()
    assert "error-summary" not in client.get(reverse("whatif-list")).content.decode()


def test_an_editor_runs_a_comparison_and_reads_it(
    client: Client,
    editor: User,
    viewer: User,
    cluster: Cluster,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(editor)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("whatif-list"), form_data(cluster))
    run = WhatIfRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "whatif-detail", args=[run.pk]
    )
    html = page(client, viewer, response["Location"]).content.decode()
    assert html.count('role="img"') >= 4  # outcome, cpu and memory distributions, pods per node
    assert "Pods placed differently" in html
    moved = run.result["differences"][0]
    assert f'<th scope="row">{moved["pod"]}</th>' in html
    assert "Run again with changes" not in html  # a viewer's page
    status = page(client, viewer, response["Location"], HTTP_X_PARTIAL="status")
    assert 'data-job-status="succeeded"' in status.content.decode()
    assert "<html" not in status.content.decode()
    listing = page(client, viewer, reverse("whatif-list")).content.decode()
    assert f"#{run.pk}</a>" in listing and "succeeded" in listing


def test_an_unfinished_run_polls_and_can_be_cancelled(
    client: Client, editor: User, cluster: Cluster
) -> None:
    run = start(cluster)
    html = page(client, editor, reverse("whatif-detail", args=[run.pk])).content.decode()
    assert "data-poll=" in html and "Waiting for a worker" in html and "<progress" in html
    client.post(reverse("whatif-cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == WhatIfStatus.CANCELLED
    html = client.get(reverse("whatif-detail", args=[run.pk])).content.decode()
    assert "data-poll=" not in html and "Cancelled" in html


def test_run_again_starts_from_the_earlier_inputs(
    client: Client, editor: User, cluster: Cluster
) -> None:
    run = start(cluster, candidate=whatif.ConfigurationInput("custom", PACKING, "pack"))
    form = page(client, editor, f"{reverse('whatif-list')}?from={run.pk}").context["form"]
    assert form.initial["candidate_label"] == "pack"
    assert "MostAllocated" in form.initial["candidate_yaml"]
    # The stored configuration comes back as the YAML it was, the stored one may change.
    assert form.initial["baseline_source"] == "custom"
    assert "LoadAwareScheduling" in form.initial["baseline_yaml"]


# -- API ----------------------------------------------------------------------------------------


def test_the_api_starts_a_comparison_and_names_bad_fields(
    api_client: Any,
    editor: User,
    viewer: User,
    cluster: Cluster,
    django_capture_on_commit_callbacks: Any,
) -> None:
    body = {
        "cluster": cluster.pk,
        "workload": SAMPLE_WORKLOAD,
        "baseline": {"source": "stored"},
        "candidate": {"source": "custom", "yaml": PACKING.replace("MostAllocated", "Most")},
    }
    api_client.force_login(viewer)
    assert api_client.post("/api/v1/what-if/", body, format="json").status_code == 403
    api_client.force_login(editor)
    response = api_client.post("/api/v1/what-if/", body, format="json")
    assert response.status_code == 400
    assert list(response.json()["candidate.yaml"]) == [
        "profiles[0].pluginConfig[0].args.scoringStrategy.type: supported values: "
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    ]
    body["candidate"] = {"source": "custom", "yaml": PACKING, "name": "pack"}
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post("/api/v1/what-if/", body, format="json")
    assert response.status_code == 202, response.json()
    assert response.json()["status"] == "queued"  # the run starts once the request commits
    response = api_client.get(f"/api/v1/what-if/{response.json()['id']}/")
    assert response.status_code == 200, response.json()
    run = response.json()
    assert (run["status"], run["candidate_label"], run["pod_count"]) == ("succeeded", "pack", 40)
    assert run["result"]["differenceCount"] == len(run["result"]["differences"]) > 0
    api_client.force_login(viewer)
    listed = api_client.get("/api/v1/what-if/", {"status": "succeeded"}).json()
    assert [r["id"] for r in listed["results"]] == [run["id"]]
    assert "result" not in listed["results"][0] and listed["results"][0]["pod_count"] == 40
    cancel = api_client.post(f"/api/v1/what-if/{run['id']}/cancel/")
    assert cancel.status_code == 403  # viewers cannot
    api_client.force_login(editor)
    cancel = api_client.post(f"/api/v1/what-if/{run['id']}/cancel/")
    assert cancel.status_code == 400 and cancel.json()["status"] == ["the comparison is succeeded"]


def test_a_side_can_use_the_stored_node_threshold_policies(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    stored = ClusterSnapshot.snapshots.get(cluster=cluster)
    # Nodes without someone else's annotation (a push leaves those alone).
    names = sorted(
        o["metadata"]["name"]
        for o in stored.objects
        if o["kind"] == "Node" and KEY not in (o["metadata"].get("annotations") or {})
    )
    strict = names[:6]  # a policy no node can meet: cpu usage at most 1%
    NodeThresholdPolicy.objects.create(
        cluster=cluster, name="strict", node_names=strict, usage_thresholds={"cpu": 1}
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = start(
            cluster,
            baseline=STORED,
            candidate=whatif.ConfigurationInput("stored", label="with policies", thresholds=True),
        )
    run.refresh_from_db()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error
    a, b = run.result["runs"]
    assert (a["thresholdsFromPolicies"], b["thresholdsFromPolicies"]) == (False, True)
    assert b["annotationsChanged"] == len(strict)
    placed_on = {side: set() for side in "ab"}
    for moved in run.result["differences"]:
        for side, node in zip("ab", moved["nodes"], strict=True):
            placed_on[side].add(node)
    assert placed_on["a"] & set(strict)  # without the policy, pods land there
    assert not placed_on["b"] & set(strict)  # with it, LoadAware keeps them away
    over = b["utilization"]["cpu"]["overThreshold"] - a["utilization"]["cpu"]["overThreshold"]
    assert over >= len(strict) - 1  # the strict nodes are over their (new) threshold
    untouched = ClusterSnapshot.snapshots.get(pk=stored.pk).objects
    assert untouched == stored.objects  # nothing was written


def test_starting_comparisons_is_rate_limited_reading_is_not(
    api_client: Any, editor: User, cluster: Cluster, settings: Any
) -> None:
    settings.API_WHATIF_RATE = "1/minute"
    api_client.force_login(editor)
    body = {"cluster": cluster.pk, "workload": "", "baseline": {"source": "stored"}}
    assert api_client.post("/api/v1/what-if/", body, format="json").status_code == 400
    refused = api_client.post("/api/v1/what-if/", body, format="json")
    assert refused.status_code == 429 and "Retry-After" in refused
    assert api_client.get("/api/v1/what-if/").status_code == 200


CUSTOM_FILTER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled:
      - name: CustomFilter
"""


def test_configurations_are_checked_for_the_clusters_scheduler_target(cluster: Cluster) -> None:
    candidate = whatif.ConfigurationInput("custom", CUSTOM_FILTER)
    # kube-scheduler (inferred) has no CustomFilter and would not start.
    assert "CustomFilter" in errors_of(cluster, candidate=candidate)["candidate"][0]
    # A custom build may register it: unknown names are warnings there, and the run starts.
    cluster.scheduler_flavor, cluster.scheduler_version = "custom", "1.35"
    cluster.save()
    assert start(cluster, candidate=candidate).pk is not None


def test_the_page_says_how_many_pods_stay_pending_and_why(
    client: Client, viewer: User, cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = start(cluster, workload_source="pending", workload="", candidate=DEFAULTS)
    run.refresh_from_db()
    pending = run.result["runs"][1]["pending"]
    response = page(client, viewer, reverse("whatif-detail", args=[run.pk]))
    html = response.content.decode()
    assert f"B: {pending} pods stay pending: no profile for schedulerName" in html
    assert "kube-scheduler ignores a pod whose schedulerName none of its profiles has" in html
    rows = {m.name: m.values for m in response.context["metrics"]}
    assert rows["pods pending: no profile for their schedulerName"] == ("0", str(pending))
    assert f"{pending} pending" in html


# -- presets ------------------------------------------------------------------------------------


def _fit_strategies(document: dict[str, Any]) -> list[Any]:
    return [
        entry["args"]["scoringStrategy"]
        for profile in document["profiles"]
        for entry in profile.get("pluginConfig", [])
        if entry["name"] == "NodeResourcesFit"
    ]


def _loadaware(engine_config: Any) -> list[dict[str, Any]]:
    return [
        dict(p.plugin_args["LoadAwareScheduling"])
        for p in engine_config.profiles
        if "LoadAwareScheduling" in p.enabled_plugins()
    ]


def test_presets_derive_a_candidate_from_the_stored_configuration(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    stored = SchedulerConfiguration.objects.get(cluster=cluster)
    before = stored.written_document()
    packing = whatif.preset_configuration(cluster, "most-allocated", None)
    assert packing.base == f"stored configuration v{stored.version}"
    assert packing.label == "MostAllocated"
    strategies = _fit_strategies(packing.document)
    assert len(strategies) == len(packing.document["profiles"]) >= 1
    assert {s["type"] for s in strategies} == {"MostAllocated"}
    # Everything else is the stored configuration's, untouched.
    assert [p["schedulerName"] for p in packing.document["profiles"]] == [
        p["schedulerName"] for p in before["profiles"]
    ]
    assert stored.written_document() == before

    ratio = whatif.preset_configuration(cluster, "requested-to-capacity", None)
    (strategy, *_) = _fit_strategies(ratio.document)
    assert strategy["type"] == "RequestedToCapacityRatio"
    assert strategy["requestedToCapacityRatio"]["shape"][-1] == {"utilization": 100, "score": 10}

    was = _loadaware(engine_for(before).config)
    up = whatif.preset_configuration(cluster, "loadaware-thresholds", 10)
    assert up.label.startswith("LoadAware thresholds +10 points")
    stopped = [
        f"usageThresholds.{name} {value} → 100, not {value + 10}"
        for profile in was
        for name, value in profile["usageThresholds"].items()
        if value and value + 10 > 100
    ]
    for held in stopped:  # a value a bound stopped is never moved silently
        assert held in up.label
    assert ("held within 1-100" in up.label) == bool(stopped)
    now = _loadaware(engine_for(up.document).config)
    assert was and len(now) == len(was)
    for old, new in zip(was, now, strict=True):
        assert new["usageThresholds"] == {
            name: min(100, value + 10) if value else 0
            for name, value in old["usageThresholds"].items()
        }
    down = whatif.preset_configuration(cluster, "loadaware-thresholds", -200)
    assert "held within 1-100: usageThresholds." in down.label
    assert all(
        set(p["usageThresholds"].values()) <= {0, 1}
        for p in _loadaware(engine_for(down.document).config)
    )

    # A derived candidate runs like any YAML.
    candidate = whatif.ConfigurationInput("custom", yaml.safe_dump(packing.document), "pack")
    with django_capture_on_commit_callbacks(execute=True):
        run = start(cluster, candidate=candidate)
    run.refresh_from_db()
    assert run.status == WhatIfStatus.SUCCEEDED, run.error


def test_presets_name_what_is_missing(cluster: Cluster, demo_snapshot: ClusterSnapshot) -> None:
    def problem(*args: Any) -> dict[str, list[str]]:
        with pytest.raises(whatif.WhatIfInvalid) as caught:
            whatif.preset_configuration(*args)
        return caught.value.errors

    assert problem(cluster, "", None) == {"preset": ["choose a preset"]}
    assert "percentage points" in problem(cluster, "loadaware-thresholds", 0)["points"][0]
    other = Cluster.objects.create(name="plain")
    assert problem(other, "loadaware-thresholds", 5) == {
        "preset": ["no profile of the configuration enables LoadAwareScheduling"]
    }
    # Without a stored configuration a preset starts from kube-scheduler's defaults.
    packing = whatif.preset_configuration(other, "most-allocated", None)
    assert packing.base == "kube-scheduler defaults"
    assert _fit_strategies(packing.document) == [{"type": "MostAllocated"}]


def test_a_preset_fills_in_the_sides_yaml_to_read_before_running(
    client: Client, editor: User, cluster: Cluster
) -> None:
    client.force_login(editor)
    data = form_data(
        cluster,
        candidate_source="defaults",
        candidate_label="",
        candidate_yaml="",
        candidate_preset="loadaware-thresholds",
        candidate_points="-15",
        apply_preset="candidate",
    )
    response = client.post(reverse("whatif-list"), data)
    assert response.status_code == 200 and not WhatIfRun.objects.exists()  # nothing runs
    form = response.context["form"]
    assert not form.errors and response.context["errors"] == []
    assert form["candidate_source"].value() == "custom"
    assert form["candidate_label"].value() == "LoadAware thresholds -15 points"
    derived = yaml.safe_load(form["candidate_yaml"].value())
    assert derived == whatif.preset_configuration(cluster, "loadaware-thresholds", -15).document
    html = response.content.decode()
    assert "the cluster&#x27;s stored configuration v" in html
    assert "LoadAware usage thresholds -15 percentage points" in html
    # The page opens on the derived YAML (autofocus: no script needed).
    textareas = re.findall(r"<textarea [^>]*>", html)
    assert [t for t in textareas if "autofocus" in t] == [
        t for t in textareas if 'id="id_candidate_yaml"' in t
    ]
    # The other inputs are kept as they were.
    assert form["workload"].value() == SAMPLE_WORKLOAD
    assert form["baseline_source"].value() == "stored"
    # Then the run uses the derived YAML as it stands.
    with_run = {k: str(v) for k, v in form.data.items()}
    with_run.pop("apply_preset")
    client.post(reverse("whatif-list"), with_run)
    run = WhatIfRun.objects.get()
    assert run.candidate == derived and run.candidate_label == "LoadAware thresholds -15 points"


def test_a_preset_that_cannot_apply_says_why_on_its_field(
    client: Client, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    data = form_data(
        demo_snapshot.cluster,
        candidate_preset="loadaware-thresholds",
        candidate_points="5",
        apply_preset="candidate",
    )
    response = client.post(reverse("whatif-list"), data)
    assert response.context["form"].errors == {
        "candidate_preset": ["no profile of the configuration enables LoadAwareScheduling"]
    }
    assert response.context["errors"][0][:2] == ("id_candidate_preset", "Candidate (B): Preset")
    assert response.context["form"]["candidate_yaml"].value() == PACKING  # untouched


@pytest.mark.parametrize("preset", ["most-allocated", "requested-to-capacity"])
def test_a_preset_is_written_for_the_clusters_scheduler_version(
    cluster: Cluster, preset: str
) -> None:
    """koord-scheduler 1.4 (Kubernetes 1.24) reads v1beta2 and v1beta3, not v1: the derived
    configuration is in a version it reads and passes its checks."""
    cluster.scheduler_flavor, cluster.scheduler_version = "koord-scheduler", "1.4"
    cluster.save()
    derived = whatif.preset_configuration(cluster, preset, None)
    assert derived.document["apiVersion"] == "kubescheduler.config.k8s.io/v1beta3"
    _, errors = validate_configuration(derived.document, target=cluster.scheduler_target())
    assert errors == []
    up = whatif.preset_configuration(cluster, "loadaware-thresholds", 5)
    assert up.document["apiVersion"] == "kubescheduler.config.k8s.io/v1beta3"


def test_a_comparison_whose_process_cannot_start_says_so(
    cluster: Cluster, settings: Any, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from policy.core import processes

    def refuse(name: str, *args: str) -> int:
        raise OSError("no such file: manage.py")

    settings.WHATIF_OWN_PROCESS = True
    monkeypatch.setattr(processes, "start_command", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        run = start(cluster)
    run.refresh_from_db()
    assert run.status == WhatIfStatus.FAILED
    assert run.error == "could not start the comparison's process: no such file: manage.py"
