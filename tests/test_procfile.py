"""The Procfile lists every process a deployment runs, and docker-compose.yml and deploy/ run
the same ones."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def procfile() -> dict[str, list[str]]:
    processes = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, command = line.split(":", 1)
            processes[name] = shlex.split(command)
    return processes


def test_the_procfile_runs_web_worker_engine_and_beat() -> None:
    processes = procfile()
    assert set(processes) == {"web", "worker", "engine", "beat"}
    assert processes["web"][:2] == ["gunicorn", "config.wsgi"]
    assert "${PORT:-8000}" in " ".join(processes["web"])
    engine = processes["engine"]
    assert "--pool=solo" in engine  # one process holds the state
    assert engine[engine.index("-Q") + 1] == "${ENGINE_QUEUES:-engine-0}"
    assert processes["worker"][processes["worker"].index("-Q") + 1] == "celery"


def test_docker_compose_and_deploy_run_the_same_processes() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    deployed = {
        doc["metadata"]["name"].removeprefix("schedboard-"): doc["spec"]["template"]["spec"][
            "containers"
        ][0]["command"]
        for doc in yaml.safe_load_all((ROOT / "deploy/app.yaml").read_text())
        if doc and doc.get("kind") == "Deployment"
    }
    for name in ("worker", "engine", "beat"):
        queue_args = [a for a in procfile()[name] if a in ("-Q", "--pool=solo")]
        for command in (compose[name]["command"], deployed[name]):
            assert command[:4] == ["celery", "-A", "config", procfile()[name][3]]
            assert [a for a in command if a in ("-Q", "--pool=solo")] == queue_args
    assert deployed["web"][:2] == compose["web"]["command"][:2] == ["gunicorn", "config.wsgi"]
