"""Real-world configurations (``fixtures/scheduler-configs``, see its README) through the CLI:
each validates (exit 0, warnings listed), evaluates a pod on a small cluster, and renders back
exactly as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoring.config import load_configuration, render_document
from scoring.config.dump import leaves
from tests.scoring.builders import make_container, make_node, make_pod, run_cli
from tests.scoring.loadaware_vectors import NOW, node_metric

FIXTURES = Path(__file__).parent / "fixtures" / "scheduler-configs"
CONFIGS = sorted(FIXTURES.glob("*.yaml"))
GI = 1024**3

# What the document alone implies (the inference rule of docs/scheduler-targets.md).
INFERRED = {
    "deckhouse-kubeadm-podtopologyspread-v1beta3.yaml": "kube-scheduler@1.28",
    "koordinator-v1.4.0-v1beta2.yaml": "koord-scheduler@1.4",
    # 1.7 dropped Coscheduling's QueueSort, which this chart enables: 1.6 is the newest it fits.
    "koordinator-v1.5.0-v1beta3.yaml": "koord-scheduler@1.6",
    "koordinator-v1.7.0-v1.yaml": "koord-scheduler@1.8",
    "kubernetes-docs-multiple-profiles-v1.yaml": "kube-scheduler@1.35",
    "scheduler-plugins-v0.26.7-capacityscheduling-v1beta2.yaml": "scheduler-plugins@0.27",
    "scheduler-plugins-v0.28.9-noderesourcetopology-v1beta3.yaml": "scheduler-plugins@0.28",
    "scheduler-plugins-v0.28.9-trimaran-v1beta3.yaml": "scheduler-plugins@0.28",
    "scheduler-plugins-v0.35-as-a-second-scheduler-v1.yaml": "scheduler-plugins@0.35",
}
# The release each was written for, where that differs from the inferred one.
WRITTEN_FOR = {
    "koordinator-v1.4.0-v1beta2.yaml": "koord-scheduler@1.4",
    "koordinator-v1.5.0-v1beta3.yaml": "koord-scheduler@1.5",
    "koordinator-v1.7.0-v1.yaml": "koord-scheduler@1.7",
    "scheduler-plugins-v0.26.7-capacityscheduling-v1beta2.yaml": "scheduler-plugins@0.26",
}


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def _validate(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("validate", "--config", str(path), "--format", "json", *extra)
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return result.returncode, report


def test_every_fixture_has_an_expected_target() -> None:
    assert {p.name for p in CONFIGS} == set(INFERRED)
    readme = (FIXTURES / "README.md").read_text()
    assert all(f"`{p.name}`" in readme for p in CONFIGS)


@pytest.mark.parametrize("path", CONFIGS, ids=_ids(CONFIGS))
def test_validate_exits_0_for_the_inferred_target(path: Path) -> None:
    code, report = _validate(path)
    assert code == 0, report
    assert report["valid"] is True
    assert report["errors"] == []
    assert isinstance(report["warnings"], list)
    assert report["target"] == INFERRED[path.name]
    assert report["apiVersion"] == yaml.safe_load(path.read_text())["apiVersion"]


@pytest.mark.parametrize("name", sorted(WRITTEN_FOR))
def test_validate_exits_0_for_the_release_it_was_written_for(name: str) -> None:
    code, report = _validate(FIXTURES / name, "--target", WRITTEN_FOR[name])
    assert code == 0, report
    assert report["target"] == WRITTEN_FOR[name]


def test_the_koordinator_1_5_chart_does_not_fit_koord_scheduler_1_7() -> None:
    """Coscheduling has no ``Less`` (QueueSort) from 1.7; the 1.7 chart sorts with PrioritySort."""
    path = FIXTURES / "koordinator-v1.5.0-v1beta3.yaml"
    code, report = _validate(path, "--target", "koord-scheduler@1.7")
    assert code == 1
    assert [(e["field"], e["detail"]) for e in report["errors"]] == [
        (
            "profiles[0].plugins.queueSort.enabled[0]",
            'plugin "Coscheduling" does not extend QueueSortPlugin plugin',
        ),
        (
            "profiles[0].plugins.queueSort",
            "only one queue sort plugin required for profile with scheduler name "
            '"koord-scheduler", but got 0',
        ),
    ]


def test_a_real_configuration_its_release_refuses_is_an_error() -> None:
    """The manifest still enables Coscheduling at postBind, which it lost in 0.26: it fits
    0.25, the release inferred, and fails NewFramework of the release it was shipped with."""
    path = FIXTURES / "invalid" / "scheduler-plugins-v0.26.7-coscheduling-v1beta2.yaml"
    code, report = _validate(path)
    assert (code, report["target"]) == (0, "scheduler-plugins@0.25")
    code, report = _validate(path, "--target", "scheduler-plugins@0.26")
    assert code == 1
    assert report["errors"] == [
        {
            "field": "profiles[0].plugins.postBind.enabled[0]",
            "type": "FieldValueInvalid",
            "detail": 'plugin "Coscheduling" does not extend PostBindPlugin plugin',
        }
    ]


@pytest.mark.parametrize("path", CONFIGS, ids=_ids(CONFIGS))
def test_render_gives_back_every_leaf(path: Path) -> None:
    written = yaml.safe_load(path.read_text())
    config = load_configuration(path.read_text(), source_name=path.name)
    rendered = yaml.safe_load(render_document(config))
    assert leaves(rendered) == leaves(written)
    assert rendered["apiVersion"] == config.api_version


def _cluster(
    tmp_path: Path, scheduler_name: str, cpu_usage: dict[str, int] | None = None
) -> tuple[Path, Path]:
    """Three 8-core nodes: "hot" at 70% cpu usage reported 200 s ago, "cool-a" at 12.5% and
    "cool-b" at 25% reported 30 s ago (``cpu_usage`` overrides millicores per node)."""
    nodes = [make_node(n, {"cpu": "8", "memory": "16Gi", "pods": "110"}) for n in NODES]
    usage = {"hot": 5600, "cool-a": 1000, "cool-b": 2000, **(cpu_usage or {})}
    ages = {"hot": 200, "cool-a": 30, "cool-b": 30}
    metrics = [
        node_metric({"node": n, "update_age_seconds": ages[n], "node_usage": _usage(usage[n])})
        for n in NODES
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([*nodes, *metrics]))
    pod = make_pod("web", containers=[make_container("c", {"cpu": "1", "memory": "1Gi"})])
    pod["spec"]["schedulerName"] = scheduler_name
    pod_path = tmp_path / "pod.yaml"
    pod_path.write_text(yaml.safe_dump(pod))
    return cluster, pod_path


NODES = ("hot", "cool-a", "cool-b")


def _usage(cpu_milli: int) -> dict[str, int]:
    return {"cpu": cpu_milli, "memory": 2 * GI}


def _evaluate(
    config: Path, tmp_path: Path, scheduler_name: str, cpu_usage: dict[str, int] | None = None
) -> dict[str, Any]:
    cluster, pod = _cluster(tmp_path, scheduler_name, cpu_usage)
    result = run_cli(
        "evaluate",
        *("--cluster", str(cluster), "--pod", str(pod), "--config", str(config)),
        *("--now", NOW, "--format", "json"),
    )
    assert result.returncode == 0, result.stderr
    decision: dict[str, Any] = json.loads(result.stdout)
    return decision


def _scheduler_names(path: Path) -> list[str]:
    profiles = yaml.safe_load(path.read_text()).get("profiles") or [{}]
    return [p.get("schedulerName") or "default-scheduler" for p in profiles]


@pytest.mark.parametrize("path", CONFIGS, ids=_ids(CONFIGS))
def test_evaluate_places_a_pod_with_each_profile(path: Path, tmp_path: Path) -> None:
    for name in _scheduler_names(path):
        decision = _evaluate(path, tmp_path, name)
        assert decision["profile"] == name
        assert decision["selectedNode"] in NODES
        for skipped in decision["skippedPlugins"]:
            assert skipped["status"] == "not modeled"
            assert skipped["extensionPoints"], skipped
        scorers = [
            s["plugin"]
            for s in decision["skippedPlugins"]
            if s["weight"] and s["plugin"] != "VolumeBinding"
        ]
        may_differ = bool(scorers) and decision["feasibleNodes"] > 1
        assert decision["rankingMayDiffer"] is may_differ
        assert decision["rankingMayDifferBecause"] == (scorers if may_differ else [])


def test_koordinator_chart_evaluates_with_load_aware_and_its_args(tmp_path: Path) -> None:
    chart = FIXTURES / "koordinator-v1.7.0-v1.yaml"
    decision = _evaluate(chart, tmp_path, "koord-scheduler")
    by_node = {n["name"]: n for n in decision["nodes"]}
    hot = {f["plugin"]: f for f in by_node["hot"]["filters"]}["LoadAwareScheduling"]
    assert (hot["code"], hot["reason"]) == ("Unschedulable", "node(s) cpu usage exceed threshold")
    assert decision["selectedNode"] == "cool-a"
    assert "LoadAwareScheduling" in {s["plugin"] for s in by_node["cool-a"]["scores"]}
    skipped = {s["plugin"]: s for s in decision["skippedPlugins"]}
    assert skipped["Reservation"]["weight"] == 5000
    assert "score" in skipped["Reservation"]["extensionPoints"]
    assert decision["rankingMayDiffer"] is True
    assert {"Reservation", "NodeNUMAResource", "DeviceShare"} <= set(
        decision["rankingMayDifferBecause"]
    )


def _load_aware_raw(decision: dict[str, Any], node: str) -> int:
    entry = next(n for n in decision["nodes"] if n["name"] == node)
    raw: int = next(s["raw"] for s in entry["scores"] if s["plugin"] == "LoadAwareScheduling")
    return raw


def test_koordinator_chart_metric_expiration_is_the_charts(tmp_path: Path) -> None:
    """The chart's nodeMetricExpirationSeconds 300 (default 180) keeps a 200 s old NodeMetric
    fresh, so LoadAware scores it; without that arg the metric is expired and scores 0."""
    chart = FIXTURES / "koordinator-v1.7.0-v1.yaml"
    usage = {"hot": 3200}  # 40%: under the 65% threshold, so every node is feasible
    decision = _evaluate(chart, tmp_path, "koord-scheduler", usage)
    assert _load_aware_raw(decision, "hot") > 0

    document = yaml.safe_load(chart.read_text())
    args = document["profiles"][0]["pluginConfig"][1]["args"]
    assert args["kind"] == "LoadAwareSchedulingArgs"
    del args["nodeMetricExpirationSeconds"]
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(document))
    decision = _evaluate(edited, tmp_path, "koord-scheduler", usage)
    assert _load_aware_raw(decision, "hot") == 0
    assert _load_aware_raw(decision, "cool-a") > 0


def test_simulate_says_when_the_ranking_may_differ(tmp_path: Path) -> None:
    chart = FIXTURES / "koordinator-v1.5.0-v1beta3.yaml"
    cluster, pod = _cluster(tmp_path, "koord-scheduler")
    result = run_cli(
        "simulate",
        *("--cluster", str(cluster), "--workload", str(pod), "--config", str(chart)),
        *("--now", NOW, "--format", "json"),
    )
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["runs"][0]
    assert run["rankingMayDiffer"] is True
    assert "Reservation" in run["rankingMayDifferBecause"]["koord-scheduler"]


CUSTOM_BUILD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom
  plugins:
    multiPoint:
      enabled: [{name: LoadAwareScheduling}, {name: NodeResourceTopologyMatch}]
    score:
      enabled: [{name: MyScorer, weight: 4}]
"""


def test_validate_lists_warnings_apart_and_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "custom.yaml"
    path.write_text(CUSTOM_BUILD)
    result = run_cli("validate", "--config", str(path))
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == f"{path}: valid, 1 warning for custom@1.35"
    assert lines[1] == "warnings:"
    assert any('ScorePlugin "MyScorer" does not exist' in line for line in lines)
    assert lines[-1].startswith("note: custom scheduler: registry not known")

    strict = run_cli("validate", "--config", str(path), "--target", "kube-scheduler@1.35")
    assert strict.returncode == 1
    assert "invalid (3 errors) for kube-scheduler@1.35" in strict.stdout
    assert "warnings:" not in strict.stdout


def test_evaluate_prints_warnings_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "custom.yaml"
    path.write_text(CUSTOM_BUILD)
    cluster, pod = _cluster(tmp_path, "custom")
    result = run_cli(
        "evaluate",
        *("--cluster", str(cluster), "--pod", str(pod), "--config", str(path)),
        *("--now", NOW, "--format", "json"),
    )
    assert result.returncode == 0, result.stderr
    assert (
        f"warning: {path}: profiles[0].plugins.score.enabled[0]: FieldValueInvalid: "
        'ScorePlugin "MyScorer" does not exist'
    ) in result.stderr
    decision = json.loads(result.stdout)
    assert "MyScorer" in decision["rankingMayDifferBecause"]
