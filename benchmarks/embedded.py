"""The embedded default under load: ``./scripts/run``'s processes on SQLite, no broker, measured.

Run outside the test suite (needs neither PostgreSQL nor Redis):
    .venv/bin/python -m benchmarks.embedded [--nodes 5000] [--evaluations 30]

Does what ``scripts/run`` does, on a fresh SQLite file in a temporary directory: migrates, loads
the demo cluster (``load_demo_cluster --nodes N``: the demo's LoadAware configuration, and its
engine work run in that process, as there is no worker) and a viewer's API token, then starts
the development server as ``scripts/run`` does (``manage.py runserver``, without the
autoreloader's parent process), which answers every engine question itself. It then measures
over HTTP: the first dashboard, node page and evaluate form of the fresh server, then
``--evaluations`` evaluations of varied pods one after another, each followed by its decision
detail. It reports the peak RSS of the loading process (``getrusage`` of the child) and of the
server (sampled every 0.2 s from ``/proc``), and each request's latency. Results:
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.deployment import (
    ROOT,
    SETUP,
    Client,
    first_views,
    percentiles,
    pod,
    rss_mib,
)


def environment(database: Path, port: int) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "PORT": str(port)}
    for name in ("CELERY_BROKER_URL", "ENGINE_IN_PROCESS"):
        env.pop(name, None)
    env["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    env["API_EVALUATE_RATE"] = "100000/min"
    env["LOG_LEVEL"] = "WARNING"
    return env


def manage(env: dict[str, str], *args: str) -> tuple[str, float]:
    """Run ``manage.py args``; its output and the peak RSS (MiB) of that process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return done.stdout, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--evaluations", type=int, default=30)
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="schedboard-embedded-") as directory:
        env = environment(Path(directory) / "db.sqlite3", args.port)
        manage(env, "migrate", "--noinput")
        began = time.perf_counter()
        _, loader_peak = manage(env, "load_demo_cluster", "--nodes", str(args.nodes))
        print(
            f"demo cluster: {args.nodes} nodes loaded in {time.perf_counter() - began:.0f} s; "
            f"loading process peak RSS {loader_peak:.0f} MiB"
        )
        token = manage(env, "shell", "-c", SETUP)[0].strip().splitlines()[-1]
        serve(env, Client(f"http://127.0.0.1:{args.port}", token), args)


def serve(env: dict[str, str], client: Client, args: argparse.Namespace) -> None:
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{args.port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_mib(server.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        wait_ready(client, server)
        cluster = client.call("GET", "/api/v1/clusters/")[1]["results"][0]["id"]
        first_views(client, cluster)
        print(f"server RSS after the first views: {rss_mib(server.pid):.0f} MiB")
        evaluations, details = [], []
        for k in range(args.evaluations):
            status, body, took = client.call(
                "POST", f"/api/v1/clusters/{cluster}/evaluate/", {"pod": pod(k)}
            )
            if status != 201:
                raise SystemExit(f"evaluate answered {status}: {str(body)[:500]}")
            evaluations.append(took)
            if k == 0:
                print(f"first evaluate: server RSS {rss_mib(server.pid):.0f} MiB")
            details.append(client.call("GET", f"/api/v1/decisions/{body['id']}/")[2])
        print(f"evaluate: {percentiles(evaluations[1:])} (first: {evaluations[0] * 1000:.0f} ms)")
        print(f"decision detail: {percentiles(details)}")
        print(f"server RSS at the end: {rss_mib(server.pid):.0f} MiB")
    finally:
        done.set()
        sampler.join()
        server.terminate()
        server.wait(timeout=30)
    print(f"server process peak RSS: {peak[0]:.0f} MiB")


def wait_ready(client: Client, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited ({server.returncode})")
        try:
            if client.call("GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("the server did not become ready")


if __name__ == "__main__":
    main()
