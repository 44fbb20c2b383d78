"""End to end: ``python -m scoring evaluate`` on a small cluster dump with two profiles."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from tests.scoring.builders import (
    make_container,
    make_node,
    make_pod,
    object_list,
    run_cli,
    write_json,
)

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: bin-packing
    plugins:
      score:
        disabled: [{name: NodeResourcesBalancedAllocation}]
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""


def cluster(tmp_path: Path) -> Path:
    objects: list[dict[str, Any]] = [
        make_node("empty", {"cpu": "8", "memory": "16Gi", "pods": "110"}),
        make_node("busy", {"cpu": "8", "memory": "16Gi", "pods": "110"}),
        make_node(
            "tainted",
            {"cpu": "8", "memory": "16Gi", "pods": "110"},
            taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        ),
        make_node("cordoned", {"cpu": "8", "memory": "16Gi", "pods": "110"}, unschedulable=True),
        make_node("small", {"cpu": "500m", "memory": "1Gi", "pods": "110"}),
        make_pod(
            "db",
            containers=[make_container("db", {"cpu": "6", "memory": "12Gi"})],
            node_name="busy",
        ),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ignored"}},
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))  # multi-document YAML, as kubectl prints
    return path


def run(tmp_path: Path, scheduler: str | None, *extra: str) -> Any:
    pod = make_pod(
        "web",
        containers=[make_container("app", {"cpu": "1", "memory": "2Gi"})],
        scheduler_name=scheduler,
    )
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    return run_cli(
        "evaluate",
        "--cluster",
        str(cluster(tmp_path)),
        "--config",
        str(config),
        "--pod",
        str(write_json(tmp_path / "pod.json", pod)),
        *extra,
    )


def test_default_profile_spreads_and_explains_every_node(tmp_path: Path) -> None:
    result = run(tmp_path, None, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "Deployment" in result.stderr  # other kinds are ignored with a warning
    decision = json.loads(result.stdout)
    assert decision["profile"] == "default-scheduler"
    assert decision["selectedNode"] == "empty"  # LeastAllocated prefers the idle node
    ranked = [n["name"] for n in decision["nodes"] if n["feasible"]]
    assert ranked == ["empty", "busy"]
    reasons = {
        n["name"]: {f["plugin"]: f["reason"] for f in n["filters"] if f["code"] != "Success"}
        for n in decision["nodes"]
        if not n["feasible"]
    }
    assert reasons == {
        "cordoned": {"NodeUnschedulable": "node(s) were unschedulable"},
        "small": {"NodeResourcesFit": "Insufficient cpu, Insufficient memory"},
        "tainted": {"TaintToleration": "node(s) had untolerated taint(s)"},
    }
    top = decision["nodes"][0]
    assert top["totalScore"] == sum(s["weighted"] for s in top["scores"])
    skipped = {s["plugin"] for s in decision["skippedPlugins"]}
    assert "VolumeBinding" in skipped and "ImageLocality" not in skipped
    assert "ImageLocality" in {s["plugin"] for s in top["scores"]}


def test_scheduler_name_selects_the_bin_packing_profile(tmp_path: Path) -> None:
    decision = json.loads(run(tmp_path, "bin-packing", "--format", "json").stdout)
    assert decision["profile"] == "bin-packing"
    assert decision["selectedNode"] == "busy"  # MostAllocated packs onto the busy node
    plugins = {s["plugin"] for s in decision["nodes"][0]["scores"]}
    assert "NodeResourcesBalancedAllocation" not in plugins


def test_table_marks_the_winner_and_lists_filtered_nodes(tmp_path: Path) -> None:
    result = run(tmp_path, None)
    assert result.returncode == 0
    assert "selected:  empty" in result.stdout
    assert re.search(r"^\*1 +empty ", result.stdout, re.M)
    assert re.search(r"^cordoned +NodeUnschedulable ", result.stdout, re.M)


def test_unknown_scheduler_name_is_exit_2_naming_the_field(tmp_path: Path) -> None:
    result = run(tmp_path, "nobody")
    assert result.returncode == 2
    assert "spec.schedulerName" in result.stderr and "'nobody'" in result.stderr


def test_bad_inputs_are_exit_2_with_the_file_named(tmp_path: Path) -> None:
    missing = run_cli("evaluate", "--pod", str(tmp_path / "absent.json"))
    assert missing.returncode == 2 and "absent.json" in missing.stderr
    bad_pod = write_json(
        tmp_path / "bad.json", make_pod("p", containers=[make_container("c", {"cpu": "x"})])
    )
    result = run_cli(
        "evaluate",
        "--cluster",
        str(write_json(tmp_path / "c.json", object_list([]))),
        "--pod",
        str(bad_pod),
    )
    assert result.returncode == 2 and "spec.containers[0].resources.requests.cpu" in result.stderr


def test_validate_reports_every_error(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 101\nprofiles:\n- schedulerName: a\n- schedulerName: a\n"
    )
    result = run_cli("validate", "--config", str(config), "--format", "json")
    assert result.returncode == 1
    fields = {e["field"]: e["type"] for e in json.loads(result.stdout)["errors"]}
    assert fields["percentageOfNodesToScore"] == "FieldValueInvalid"
    assert fields["profiles[1].schedulerName"] == "FieldValueDuplicate"
    ok = tmp_path / "ok.yaml"
    ok.write_text(CONFIG)
    assert run_cli("validate", "--config", str(ok)).returncode == 0
