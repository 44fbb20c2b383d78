"""``python -m scoring simulate`` as the engine CLI contract describes it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.scoring.builders import (
    make_container,
    make_node,
    make_pod,
    object_list,
    run_cli,
    single_profile_config,
    write_json,
)

GI = 1 << 30
NOW = "2026-11-22T12:00:00Z"


def deployment(name: str, replicas: int, cpu: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [make_container("app", {"cpu": cpu, "memory": GI})]},
            },
        },
    }


def fit(strategy: str) -> dict[str, Any]:
    """Only the fit strategy decides: no system default spreading (which would spread the
    Deployment's replicas even under MostAllocated, its ReplicaSet being in the snapshot)."""
    args = {"scoringStrategy": {"type": strategy}}
    no_defaults = {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}
    return single_profile_config({}, [{"name": "NodeResourcesFit", "args": args}, no_defaults])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    nodes = [make_node(f"n{i}", {"cpu": 4000, "memory": 8 * GI, "pods": 10}) for i in range(3)]
    workload = [
        deployment("web", 3, 1000),
        make_pod("solo", namespace="shop", containers=[make_container("c", {"cpu": 9000})]),
    ]
    return {
        "cluster": write_json(tmp_path / "cluster.json", object_list(nodes)),
        "workload": write_json(tmp_path / "workload.json", object_list(workload)),
        "spread": write_json(tmp_path / "spread.json", fit("LeastAllocated")),
        "pack": write_json(tmp_path / "pack.json", fit("MostAllocated")),
    }


def simulate(files: dict[str, Path], *extra: str) -> dict[str, Any]:
    result = run_cli(
        "simulate",
        "--cluster",
        str(files["cluster"]),
        "--config",
        str(files["spread"]),
        "--workload",
        str(files["workload"]),
        "--now",
        NOW,
        "--format",
        "json",
        *extra,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_json_output_places_the_expanded_workload(files: dict[str, Path]) -> None:
    report = simulate(files)
    assert "differences" not in report
    (run,) = report["runs"]
    assert run["config"] == str(files["spread"])
    assert (run["placed"], run["unschedulable"]) == (3, 1)
    names = [p["pod"] for p in run["pods"]]
    assert all(re.fullmatch(r"shop/web-[4-9bcdf]+-[b-z2-9]{5}", n) for n in names[:3])
    assert names[3] == "shop/solo"
    assert [p["selectedNode"] for p in run["pods"]] == ["n0", "n1", "n2", None]
    assert run["pods"][3]["reason"] == "0/3 nodes are available: 3 Insufficient cpu."
    assert run["utilization"]["cpu"]["mean"] == 0.25
    assert run["utilization"]["cpu"]["stddev"] == 0.0
    assert run["utilization"]["cpu"]["overThreshold"] is None


def test_compare_config_runs_the_same_workload_side_by_side(files: dict[str, Path]) -> None:
    report = simulate(files, "--compare-config", str(files["pack"]))
    spread, pack = report["runs"]
    assert pack["config"] == str(files["pack"])
    assert [p["selectedNode"] for p in pack["pods"]] == ["n0", "n0", "n0", None]
    assert pack["utilization"]["cpu"]["max"] == 0.75
    web = [p["pod"] for p in spread["pods"][1:3]]
    assert report["differences"] == [
        {"pod": web[0], "nodes": ["n1", "n0"]},
        {"pod": web[1], "nodes": ["n2", "n0"]},
    ]


def test_no_cache_changes_nothing_but_speed(files: dict[str, Path]) -> None:
    def decisions(report: dict[str, Any]) -> Any:
        return [
            {k: v for k, v in r.items() if k not in ("seconds", "cache")} for r in report["runs"]
        ]

    cached = simulate(files, "--compare-config", str(files["pack"]))
    plain = simulate(files, "--compare-config", str(files["pack"]), "--no-cache")
    assert decisions(cached) == decisions(plain)
    assert plain["runs"][0]["cache"] is None and cached["runs"][0]["cache"]["filterHits"] > 0


def test_the_seed_decides_generated_names(files: dict[str, Path]) -> None:
    def names(*extra: str) -> list[str]:
        return [p["pod"] for p in simulate(files, *extra)["runs"][0]["pods"]]

    assert names() == names("--seed", "0")
    assert names() != names("--seed", "1")


def test_table_output_shows_runs_side_by_side(files: dict[str, Path]) -> None:
    result = run_cli(
        "simulate",
        "--cluster",
        str(files["cluster"]),
        "--config",
        str(files["spread"]),
        "--compare-config",
        str(files["pack"]),
        "--workload",
        str(files["workload"]),
        "--now",
        NOW,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.match(r"pods placed\s+3\s+3$", next(x for x in lines if x.startswith("pods placed")))
    assert any(re.match(r"cpu mean / stddev / max\s+25\.0% / 0\.0% / 25\.0%", x) for x in lines)
    assert "Unschedulable pods under " + str(files["spread"]) + ":" in lines
    assert "Pods placed differently (2):" in lines


def test_other_kinds_in_the_workload_are_ignored_with_a_warning(
    files: dict[str, Path], tmp_path: Path
) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}
    files["workload"] = write_json(tmp_path / "w.json", object_list([service]))
    result = run_cli(
        "simulate",
        "--cluster",
        str(files["cluster"]),
        "--config",
        str(files["spread"]),
        "--workload",
        str(files["workload"]),
        "--format",
        "json",
    )
    assert result.returncode == 0
    assert "warning: ignoring v1 Service default/web: kind not read" in result.stderr
    assert json.loads(result.stdout)["runs"][0]["pods"] == []


def run_bad(files: dict[str, Path], *args: str) -> str:
    paths = ["--cluster", str(files["cluster"]), "--workload", str(files["workload"])]
    result = run_cli("simulate", *paths, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    return result.stderr


def test_a_bad_controller_is_reported_with_file_object_and_field(
    files: dict[str, Path], tmp_path: Path
) -> None:
    bad = deployment("web", 1, 100)
    bad["spec"]["replicas"] = "two"
    files["workload"] = write_json(tmp_path / "bad.json", object_list([bad]))
    stderr = run_bad(files, "--config", str(files["spread"]))
    assert f"error: {files['workload']}: Deployment shop/web: spec.replicas" in stderr


def test_a_pod_without_a_profile_is_bad_input(files: dict[str, Path], tmp_path: Path) -> None:
    pod = make_pod("p", containers=[make_container("c")], scheduler_name="nobody")
    files["workload"] = write_json(tmp_path / "p.json", object_list([pod]))
    stderr = run_bad(files, "--config", str(files["spread"]))
    assert "spec.schedulerName: no profile named 'nobody'" in stderr


def test_an_invalid_compare_config_names_its_own_file(
    files: dict[str, Path], tmp_path: Path
) -> None:
    broken = fit("LeastAllocated")
    broken["profiles"][0]["schedulerName"] = ""
    path = write_json(tmp_path / "broken.json", broken)
    stderr = run_bad(files, "--config", str(files["spread"]), "--compare-config", str(path))
    assert stderr.startswith(f"error: {path}: profiles[0].schedulerName")


def test_a_missing_file_or_flag_is_bad_input(files: dict[str, Path], tmp_path: Path) -> None:
    stderr = run_bad(files, "--config", str(tmp_path / "missing.yaml"))
    assert "missing.yaml: cannot read" in stderr
    assert "--config" in run_bad(files)  # required by the contract
