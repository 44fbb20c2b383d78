"""Builders for Kubernetes objects and a runner for the engine CLI, shared by engine tests.

Conformance vectors describe nodes and pods in a compact form; these helpers turn them into the
real v1 objects the CLI reads, so every vector goes through the same path an admin's files do.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from scoring import cli

REPO = Path(__file__).resolve().parents[2]


def quantity(name: str, amount: int | str) -> str:
    """Scheduler integers back to quantities: cpu integers are millicores."""
    if isinstance(amount, str):
        return amount
    return f"{amount}m" if name == "cpu" else str(amount)


def resource_list(amounts: Mapping[str, int | str] | None) -> dict[str, str]:
    return {name: quantity(name, amount) for name, amount in (amounts or {}).items()}


def make_node(
    name: str,
    allocatable: Mapping[str, int | str] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
) -> dict[str, Any]:
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            "annotations": dict(annotations or {}),
        },
        "spec": {"taints": list(taints)} if taints else {},
        "status": {
            "allocatable": resource_list(allocatable),
            "capacity": resource_list(allocatable),
        },
    }
    if unschedulable:
        node["spec"]["unschedulable"] = True
    return node


def make_container(
    name: str,
    requests: Mapping[str, int | str] | None = None,
    limits: Mapping[str, int | str] | None = None,
    *,
    restart_policy: str | None = None,
    image: str = "registry.k8s.io/pause:3.9",
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = resource_list(requests)
    if limits:
        resources["limits"] = resource_list(limits)
    container: dict[str, Any] = {"name": name, "image": image}
    if resources:
        container["resources"] = resources
    if restart_policy:
        container["restartPolicy"] = restart_policy
    return container


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    containers: Sequence[Mapping[str, Any]] = (),
    init_containers: Sequence[Mapping[str, Any]] = (),
    node_name: str | None = None,
    scheduler_name: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"containers": list(containers), **(spec or {})}
    if init_containers:
        pod_spec["initContainers"] = list(init_containers)
    if node_name:
        pod_spec["nodeName"] = node_name
    if scheduler_name:
        pod_spec["schedulerName"] = scheduler_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels or {}),
            "annotations": dict(annotations or {}),
        },
        "spec": pod_spec,
        "status": dict(status or ({"phase": "Running"} if node_name else {"phase": "Pending"})),
    }


def object_list(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(items)}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m scoring`` in a subprocess, exactly as an admin would."""
    return subprocess.run(
        [sys.executable, "-m", "scoring", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def run_engine(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line's ``main`` in this process: what ``python -m scoring`` runs, without a
    Python start-up per vector (``run_cli`` runs the real process; the CLI's own tests use
    it)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main(list(args))
        except SystemExit as exc:  # argparse's refusals
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["scoring", *args], code, out.getvalue(), err.getvalue())


def evaluate(
    tmp_path: Path,
    cluster: Sequence[Mapping[str, Any]],
    pod: Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    now: str | None = None,
) -> dict[str, Any]:
    """Write the inputs, run ``evaluate --format json`` and return the parsed decision."""
    args = [
        "evaluate",
        "--cluster",
        str(write_json(tmp_path / "cluster.json", object_list(cluster))),
        "--pod",
        str(write_json(tmp_path / "pod.json", pod)),
        "--format",
        "json",
    ]
    if config is not None:
        args += ["--config", str(write_json(tmp_path / "config.json", config))]
    if now is not None:
        args += ["--now", now]
    result = run_engine(*args)
    assert result.returncode == 0, result.stderr
    decision: dict[str, Any] = json.loads(result.stdout)
    return decision


def node_result(decision: Mapping[str, Any], name: str) -> dict[str, Any]:
    entry: dict[str, Any] = next(n for n in decision["nodes"] if n["name"] == name)
    return entry


def plugin_filter(decision: Mapping[str, Any], node: str, plugin: str) -> dict[str, Any]:
    entry: dict[str, Any] = next(
        f for f in node_result(decision, node)["filters"] if f["plugin"] == plugin
    )
    return entry


def plugin_score(decision: Mapping[str, Any], node: str, plugin: str) -> dict[str, Any] | None:
    return next((s for s in node_result(decision, node)["scores"] if s["plugin"] == plugin), None)


def single_profile_config(
    plugins: Mapping[str, Any], plugin_config: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """A v1 KubeSchedulerConfiguration with one profile (``default-scheduler``)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": dict(plugins),
                "pluginConfig": list(plugin_config),
            }
        ],
    }


def enabled(*names: str) -> dict[str, Any]:
    """``plugins`` enabling ``names`` at every extension point (multiPoint)."""
    return {"multiPoint": {"enabled": [{"name": name} for name in names]}}


def only_plugin_config(
    name: str, points: Sequence[str], *, weight: int = 1, args: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One profile running only ``name`` at ``points`` (queue sort and bind keep their defaults)."""
    plugins: dict[str, Any] = {}
    for point in ("preFilter", "filter", "preScore", "score"):
        entry: dict[str, Any] = {"disabled": [{"name": "*"}]}
        if point in points:
            entry["enabled"] = [{"name": name, **({"weight": weight} if point == "score" else {})}]
        plugins[point] = entry
    plugin_config = [{"name": name, "args": dict(args)}] if args is not None else []
    return single_profile_config(plugins, plugin_config)
