"""The deployment under load: the Procfile's processes on PostgreSQL and Redis, measured.

Run outside the test suite (needs PostgreSQL and Redis, as in CI):
    .venv/bin/python -m benchmarks.deployment [--nodes 5000] [--rate 5] [--duration 12]
    .venv/bin/python -m benchmarks.deployment --clusters 10 --nodes 1000 --duration 120

Creates a fresh PostgreSQL database (``--database-url``'s server) and uses Redis database 15
(flushed), migrates, loads the demo cluster(s) (``load_demo_cluster --nodes N``) and a viewer's
API token, then starts every process of the ``Procfile`` as written (web: gunicorn with 3
workers; worker; engine; beat) with ``DEBUG=false``. Once they answer it measures:

- the first views of a fresh web process (dashboard, a node page, the evaluate form);
- the first evaluation after a new snapshot was stored (from the store to the answer);
- evaluate p50/p95/max under ``--clients`` clients sending varied pods at ``--rate``
  requests/s in all for ``--duration`` s (open loop: late answers do not slow the senders),
  and the decision detail (``GET /api/v1/decisions/{id}/``) of each answer;
- database growth per decision (the decision and explanation-base tables);
- RSS of each process type, sampled every 0.5 s (peak per process, peak of the sum, and the
  peak of the sum of PSS, which counts pages processes share once), and CPU
  seconds per process type.

With ``--clusters K`` it loads K demo clusters. The beat refreshes each every 60 s as deployed
(its demo drift step); ``--refresh S`` adds a drift step of every cluster each S seconds from the
benchmark itself (it may race the beat's: the later of two is stored as a keyframe).
Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK = os.sysconf("SC_CLK_TCK")


# -- processes ----------------------------------------------------------------------------


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return {
        name.strip(): command.strip()
        for name, command in (line.split(":", 1) for line in lines if line and line[0] != "#")
    }


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def rss_mib(pid: int) -> float:
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * PAGE_SIZE / 2**20


def pss_mib(pid: int) -> float:
    """Proportional set size: pages shared between processes (a forked worker's, a preloaded
    web worker's) counted once in all, where summing RSS counts them in every process."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK


@dataclass
class Memory:
    """Peak RSS per process of each type, peak of the sum of all (RSS, and PSS: what the
    processes use together, shared pages once), CPU seconds per type."""

    peak: dict[str, float] = field(default_factory=dict)
    total_peak: float = 0.0
    pss_peak: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)

    def sample(self, started: dict[str, subprocess.Popen[bytes]]) -> None:
        total = shared_once = 0.0
        for name, process in started.items():
            pids = tree(process.pid)
            for pid in pids:
                rss = rss_mib(pid)
                total += rss
                shared_once += pss_mib(pid)
                self.peak[name] = max(self.peak.get(name, 0.0), rss)
            self.cpu[name] = sum(cpu_seconds(pid) for pid in pids)
        self.total_peak = max(self.total_peak, total)
        self.pss_peak = max(self.pss_peak, shared_once)


def start(env: dict[str, str], log_dir: Path) -> dict[str, subprocess.Popen[bytes]]:
    started = {}
    for name, command in procfile().items():
        log = (log_dir / f"{name}.log").open("wb")
        started[name] = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return started


def stop(started: dict[str, subprocess.Popen[bytes]]) -> None:
    for process in started.values():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in started.values():
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


# -- set-up -------------------------------------------------------------------------------


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


SETUP = """
from django.contrib.auth.models import Group, User
from policy.accounts.services import create_token
user = User.objects.create_user("bench-viewer", password=None)
user.groups.add(Group.objects.get_or_create(name="viewer")[0])
print(create_token(user, name="bench")[1])
"""

DRIFT = """
from policy.sync.demo import drift_demo_clusters
print(drift_demo_clusters())
"""


def prepare(args: argparse.Namespace, env: dict[str, str]) -> str:
    """A fresh database with the demo cluster(s) and a viewer; the viewer's API token."""
    server = args.database_url.rsplit("/", 1)[0]
    subprocess.run(
        ["dropdb", "--if-exists", f"--maintenance-db={server}/postgres", args.db], check=True
    )
    subprocess.run(["createdb", f"--maintenance-db={server}/postgres", args.db], check=True)
    subprocess.run(
        ["redis-cli", "-u", env["CELERY_BROKER_URL"], "flushdb"], check=True, capture_output=True
    )
    manage(env, "migrate", "--noinput")
    setup_env = {**env, "ENGINE_IN_PROCESS": "true"}  # no engine runs yet
    for k in range(args.clusters):
        name = ["--name", f"demo-{k}"] if args.clusters > 1 else []
        began = time.perf_counter()
        manage(setup_env, "load_demo_cluster", "--nodes", str(args.nodes), *name)
        print(f"demo cluster {k}: {args.nodes} nodes loaded in {time.perf_counter() - began:.0f} s")
    return manage(setup_env, "shell", "-c", SETUP).strip().splitlines()[-1]


# -- requests -----------------------------------------------------------------------------


@dataclass
class Client:
    base: str
    token: str

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Token {self.token}",
                "Content-Type": "application/json",
                "Host": "127.0.0.1",
            },
        )
        began = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                payload = answer.read()
                status = answer.status
        except urllib.error.HTTPError as exc:
            payload, status = exc.read(), exc.code
        except TimeoutError:  # counted as status 0: no answer within a minute
            return 0, b"", time.perf_counter() - began
        elapsed = time.perf_counter() - began
        try:
            return status, json.loads(payload), elapsed
        except ValueError:
            return status, payload, elapsed


def pod(k: int) -> dict[str, Any]:
    """Varied pods: requests, limits, priorities and a selector, cycling."""
    cpu = ["100m", "500m", "2", "8", "250m"][k % 5]
    memory = ["128Mi", "1Gi", "4Gi", "16Gi"][k % 4]
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "nginx",
                "resources": {
                    "requests": {"cpu": cpu, "memory": memory},
                    "limits": {"cpu": cpu, "memory": memory},
                },
            }
        ]
    }
    if k % 7 == 3:
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{k}", "namespace": "default"},
        "spec": spec,
    }


def percentiles(samples: list[float]) -> str:
    if not samples:
        return "no samples"
    ordered = sorted(samples)
    p = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return (
        f"n={len(ordered)} p50={p(0.50):.0f} ms p95={p(0.95):.0f} ms "
        f"max={ordered[-1] * 1000:.0f} ms"
    )


def load(client: Client, cluster_ids: list[int], args: argparse.Namespace) -> dict[str, Any]:
    """Open-loop evaluations at ``args.rate``/s for ``args.duration`` s; each answer's detail."""
    evaluate: list[float] = []
    detail: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    interval = 1.0 / args.rate
    began = time.perf_counter()
    count = int(args.rate * args.duration)

    def one(k: int) -> None:
        cluster = cluster_ids[k % len(cluster_ids)]
        status, body, elapsed = client.call(
            "POST", f"/api/v1/clusters/{cluster}/evaluate/", {"pod": pod(k)}
        )
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status == 201:
                evaluate.append(elapsed)
        if status == 201:
            _, _, took = client.call("GET", f"/api/v1/decisions/{body['id']}/")
            with lock:
                detail.append(took)

    threads = []
    for k in range(count):
        delay = began + k * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        thread = threading.Thread(target=one, args=(k,))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return {
        "evaluate": evaluate,
        "detail": detail,
        "statuses": statuses,
        "seconds": time.perf_counter() - began,
    }


def decision_bytes(env: dict[str, str]) -> int:
    sql = (
        "select coalesce(sum(pg_total_relation_size(c)),0) from (values "
        "('policy_placementdecision'::regclass), ('policy_explanationbase'::regclass)) t(c)"
    )
    out = subprocess.run(
        ["psql", env["DATABASE_URL"], "-tAc", sql], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


def wait_ready(client: Client, started: dict[str, subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for name, process in started.items():
            if process.poll() is not None:
                raise SystemExit(f"process {name} exited ({process.returncode}); see its log")
        try:
            status, _, _ = client.call("GET", "/readyz")
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("the web process did not become ready")


def run(args: argparse.Namespace) -> None:
    log_dir = Path(args.logs)
    log_dir.mkdir(parents=True, exist_ok=True)
    port = str(args.port)
    env = {
        **os.environ,
        "DATABASE_URL": f"{args.database_url.rsplit('/', 1)[0]}/{args.db}",
        "CELERY_BROKER_URL": args.broker_url,
        "SECRET_KEY": "benchmark-only-" + "x" * 40,
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PORT": port,
        "API_EVALUATE_RATE": "100000/min",
        "LOG_LEVEL": "WARNING",
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",  # the venv's
    }
    env.pop("ENGINE_IN_PROCESS", None)
    token = prepare(args, env)
    client = Client(f"http://127.0.0.1:{port}", token)
    started = start(env, log_dir)
    memory = Memory()
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            memory.sample(started)
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        wait_ready(client, started)
        _, clusters, _ = client.call("GET", "/api/v1/clusters/")
        ids = [c["id"] for c in clusters["results"]] if isinstance(clusters, dict) else []
        print(f"ready; clusters {ids}")
        first_views(client, ids[0])
        settle(client, env, ids[0], loaded=len(ids))
        first_after_snapshot(client, env, ids[0])
        before = decision_bytes(env)
        stop_refresh = threading.Event()
        refresher = threading.Thread(target=refresh, args=(env, args.refresh, stop_refresh))
        if args.refresh:
            refresher.start()
        result = load(client, ids, args)
        stop_refresh.set()
        if args.refresh:
            refresher.join()
        made = len(result["evaluate"])
        grown = decision_bytes(env) - before
        print(f"load: {args.rate}/s for {args.duration} s, answers {result['statuses']}")
        print(f"evaluate: {percentiles(result['evaluate'])}")
        print(f"decision detail: {percentiles(result['detail'])}")
        if made:
            print(f"database growth per decision: {grown / made / 1024:.1f} KiB ({made} decisions)")
    finally:
        sampling.set()
        sampler.join()
        stop(started)
    print(
        "peak RSS per process (MiB): "
        + ", ".join(f"{name} {value:.0f}" for name, value in sorted(memory.peak.items()))
    )
    print(f"peak RSS of all processes: {memory.total_peak:.0f} MiB")
    print(f"peak PSS of all processes (shared pages once): {memory.pss_peak:.0f} MiB")
    print(
        "CPU seconds per process type: "
        + ", ".join(f"{name} {value:.1f}" for name, value in sorted(memory.cpu.items()))
    )


def first_views(client: Client, cluster: int) -> None:
    """The first request of each view (gunicorn's workers are fresh)."""
    for label, path in (
        ("dashboard", f"/?cluster={cluster}"),
        ("evaluate form", f"/evaluate/?cluster={cluster}"),
        ("node page", f"/clusters/{cluster}/nodes/general-b-0001/"),
    ):
        status, _, took = client.call("GET", path)
        print(f"first {label}: {status} in {took * 1000:.0f} ms")


def snapshot_count(env: dict[str, str]) -> int:
    sql = "select count(*) from policy_clustersnapshot"
    out = subprocess.run(
        ["psql", env["DATABASE_URL"], "-tAc", sql], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


def settle(client: Client, env: dict[str, str], cluster: int, loaded: int) -> None:
    """Wait for the beat's first drift step of every cluster (it runs when beat starts) to be
    stored, then for the engine to hold it (one evaluation): the measured drift step must not
    race it, or the later of the two is stored as a keyframe and the engine builds instead of
    stepping."""
    deadline = time.monotonic() + 120
    while snapshot_count(env) < 2 * loaded and time.monotonic() < deadline:  # every cluster's
        time.sleep(0.5)
    client.call("POST", f"/api/v1/clusters/{cluster}/evaluate/", {"pod": pod(0)})


def first_after_snapshot(client: Client, env: dict[str, str], cluster: int) -> None:
    """A new snapshot stored (a drift step), then an evaluation at once: time from the store."""
    began = time.perf_counter()
    manage(env, "shell", "-c", DRIFT)
    stored = time.perf_counter()
    status, _, took = client.call("POST", f"/api/v1/clusters/{cluster}/evaluate/", {"pod": pod(1)})
    print(
        f"new snapshot stored in {stored - began:.1f} s; first evaluate after it: {status} in "
        f"{took * 1000:.0f} ms"
    )


def refresh(env: dict[str, str], every: float, stop_event: threading.Event) -> None:
    while not stop_event.wait(every):
        manage(env, "shell", "-c", DRIFT)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--clusters", type=int, default=1)
    parser.add_argument("--rate", type=float, default=5.0, help="evaluations per second, in all")
    parser.add_argument("--duration", type=float, default=12.0)
    parser.add_argument(
        "--refresh",
        type=float,
        default=0.0,
        help="store a new snapshot of every demo cluster this often (s)",
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/schedboard"),
    )
    parser.add_argument("--db", default="schedboard_deployment_bench")
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--logs", default=str(ROOT / "var" / "benchmark-logs"))
    args = parser.parse_args()
    if urlsplit(args.database_url).scheme not in ("postgres", "postgresql"):
        raise SystemExit("--database-url must be PostgreSQL")
    print(f"processes: {', '.join(shlex.quote(n) for n in procfile())}")
    run(args)


if __name__ == "__main__":
    main()
