"""Batch placement benchmark: the equivalence-class cache against no cache, in one process.

Run outside the test suite:
    .venv/bin/python -m benchmarks.simulation [--nodes 5000] [--pods-per-node 10]
        [--deployments 100] [--replicas 100] [--nrt-nodes 250] [--order grouped|interleaved]
        [--skip-uncached] [--per-plugin] [--disable PLUGIN ...] [--anti-affinity] [--cli]

Builds a synthetic cluster (default 5,000 nodes, 50,000 bound pods, each node reporting the images
it holds, see ``add_node_images``), expands the Deployments
into pods, and places them one after another with the default profile plus LoadAwareScheduling,
LimitAware and NodeResourceTopologyMatch, every node evaluated for every pod: once with the
cache, once without, each on its own copy of the snapshot. Both runs must make the same
decisions. Prints placements per second, the speed-up, cache statistics and the peak resident
memory of the process (``getrusage``; it includes building the cluster and both copies).
``--per-plugin`` instead times each plugin on every node against the cache's answer (nothing
changed, and one node changed), which decides where caching is worth it. ``--cli`` runs
``python -m scoring simulate`` on the same cluster (one kubectl-style JSON List file), workload
and profile in a child process instead, and prints its time and peak RSS. Results and the machine
they were measured on: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.engine import EXTENDED_PROFILE
from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.framework import Code, Cycle
from scoring.objects import Pod, parse_pod
from scoring.simulation.cache import EquivalenceCache
from scoring.simulation.journal import journal
from scoring.simulation.simulator import SimulationRun, simulate
from scoring.simulation.synthetic_workload import generate_deployments
from scoring.simulation.workload import expand_workload, workload_controllers
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
MIB = 1 << 20


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / MIB if sys.platform == "darwin" else peak / 1024


def timed(label: str, fn: Any) -> Any:
    start = time.perf_counter()
    result = fn()
    print(f"{label:<44} {time.perf_counter() - start:8.2f} s")
    return result


def generated(args: argparse.Namespace) -> list[Any]:
    """The synthetic cluster's objects."""
    return generate_cluster(
        nodes=args.nodes,
        pods_per_node=args.pods_per_node,
        pending_pods=0,
        nrt_nodes=args.nrt_nodes,
        seed=1,
        now=NOW,
    )


def cluster(args: argparse.Namespace) -> Snapshot:
    """The synthetic cluster's snapshot (its objects are dropped once it is built)."""
    objects = timed("generate the cluster", lambda: generated(args))
    timed("report images on the nodes", lambda: add_node_images(objects, args))
    snapshot: Snapshot = timed("build the snapshot", lambda: Snapshot.from_objects(objects))
    return snapshot


SYSTEM_IMAGES = (
    "registry.k8s.io/pause:3.9",
    "registry.k8s.io/kube-proxy:v1.35.0",
    "docker.io/calico/node:v3.28.0",
)


def _stable(text: str) -> int:
    return zlib.crc32(text.encode())


def add_node_images(objects: list[Any], args: argparse.Namespace) -> None:
    """Give every Node a ``status.images`` for ImageLocality to read, deterministically: the
    system images, the images of the pods bound to it, and each workload Deployment's image on
    about 1 node in 20 (an earlier rollout pulled it there). Sizes are 20-900 MiB by name."""
    bound: dict[str, set[str]] = {}
    for obj in objects:
        if obj.get("kind") == "Pod" and obj["spec"].get("nodeName"):
            images = bound.setdefault(obj["spec"]["nodeName"], set())
            images.update(c["image"] for c in obj["spec"]["containers"])
    templates = generate_deployments(count=args.deployments, replicas=1, seed=1)
    rollout = [c["image"] for d in templates for c in d["spec"]["template"]["spec"]["containers"]]
    for obj in objects:
        if obj.get("kind") != "Node":
            continue
        name = obj["metadata"]["name"]
        pulled = {i for i in rollout if _stable(i + name) % 20 == 0}
        names = sorted({*SYSTEM_IMAGES, *bound.get(name, ()), *pulled})
        obj["status"]["images"] = [
            {"names": [image], "sizeBytes": (20 + _stable(image) % 880) * MIB} for image in names
        ]


def workload(args: argparse.Namespace, snapshot: Snapshot) -> list[Pod]:
    """The workload's pods; their ReplicaSets join the snapshot (system default spreading)."""
    deployments = generate_deployments(count=args.deployments, replicas=args.replicas, seed=1)
    if args.anti_affinity:
        for deployment in deployments:
            add_anti_affinity(deployment)
    pods = [parse_pod(obj) for obj in expand_workload(deployments, seed=1)]
    snapshot.add_cluster_objects(workload_controllers(deployments))
    if args.order == "interleaved":  # replicas of different deployments mixed, not grouped
        random.Random(7).shuffle(pods)
    return pods


def add_anti_affinity(deployment: dict[str, Any]) -> None:
    """Replicas of a Deployment on distinct nodes (required) and preferably distinct zones."""
    template = deployment["spec"]["template"]
    app = template["metadata"]["labels"]["app.kubernetes.io/name"]
    selector = {"matchLabels": {"app.kubernetes.io/name": app}}
    host = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
    zone = {"labelSelector": selector, "topologyKey": "topology.kubernetes.io/zone"}
    template["spec"].setdefault("affinity", {})["podAntiAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": [host],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": zone}
        ],
    }


def run(engine: Engine, snapshot: Snapshot, pods: list[Pod], *, cache: bool) -> SimulationRun:
    engine.evaluate(pods[0], snapshot, NOW)  # build the plugins' snapshot state first
    cpu_start = time.process_time()
    result = simulate(engine, snapshot, pods, NOW, use_cache=cache)
    cpu = time.process_time() - cpu_start
    rate = len(pods) / result.seconds
    label = "cached" if cache else "uncached"
    print(
        f"{label:<9} {len(pods)} pods in {result.seconds:8.2f} s = {rate:8.1f} placements/s "
        f"({1000 * result.seconds / len(pods):.3f} ms each), placed {result.placed}, "
        f"unschedulable {result.unschedulable}"
    )
    # CPU time is steadier than wall time on a shared machine (other work steals the cores).
    print(f"{'':<9} CPU {cpu:8.2f} s = {len(pods) / cpu:8.1f} placements per CPU-second")
    return result


def per_plugin(engine: Engine, snapshot: Snapshot, pods: list[Pod]) -> None:
    """Per plugin: one full Filter/Score against the cache's answer with nothing changed, and
    with one node changed since the class was last seen (what a placement leaves behind)."""
    framework = engine.frameworks["default-scheduler"]
    pod = pods[0]
    cycle = Cycle(pod, snapshot, NOW)
    for plugin in framework.pre_filters:
        plugin.pre_filter(cycle)
    everywhere = np.arange(len(snapshot), dtype=np.int64)
    skipped = set()  # PreScore said Skip: the engine does not score them for this pod
    for plugin in framework.pre_scores:
        if plugin.pre_score(cycle, everywhere).code == Code.SKIP:
            skipped.add(plugin.name)
    cache = EquivalenceCache()
    results = cache.bind(pod, snapshot, NOW)
    log = journal(snapshot)
    rng = np.random.default_rng(3)

    def one_change() -> None:
        log.pod_added(pod, int(rng.integers(len(snapshot))))

    print(f"{'plugin':<34}{'point':<7}{'full':>10}{'cached':>10}{'1 changed':>11}  (µs)")
    for plugin in framework.filters:
        results.filter(plugin, cycle)
        row = [
            _micro(lambda p=plugin: p.filter(cycle)),
            _micro(lambda p=plugin: results.filter(p, cycle)),
            _micro(lambda p=plugin: results.filter(p, cycle), before=one_change),
        ]
        print(f"{plugin.name:<34}{'filter':<7}" + "".join(f"{v:>10.1f}" for v in row))
    for scored in framework.scores:
        plugin = scored.plugin
        if plugin.name in skipped:
            print(f"{plugin.name:<34}{'score':<7}  skipped by its PreScore for this pod")
            continue
        results.score(plugin, cycle, everywhere)
        row = [
            _micro(lambda p=plugin: p.score(cycle, everywhere)),
            _micro(lambda p=plugin: results.score(p, cycle, everywhere)),
            _micro(lambda p=plugin: results.score(p, cycle, everywhere), before=one_change),
        ]
        print(f"{plugin.name:<34}{'score':<7}" + "".join(f"{v:>10.1f}" for v in row))


def _micro(fn: Callable[[], object], before: Callable[[], None] | None = None) -> float:
    """Median µs of ``fn`` over 200 runs (``before`` runs untimed ahead of each)."""
    samples = []
    for _ in range(200):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def profile(disabled: list[str]) -> dict[str, Any]:
    """The extended profile with ``disabled`` plugins left out (to measure what they cost)."""
    config = copy.deepcopy(EXTENDED_PROFILE)
    if disabled:
        multi = config["profiles"][0]["plugins"]["multiPoint"]
        multi["disabled"] = [{"name": name} for name in disabled]
    return config


def run_cli(args: argparse.Namespace) -> None:
    """``python -m scoring simulate`` on the same cluster and workload, written as files the
    way kubectl writes them (one indented JSON List), in a child process: its wall time and
    peak RSS are the command's own, without the generator's objects."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        objects = generated(args)
        add_node_images(objects, args)
        cluster_doc = {"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {}}
        (folder / "cluster.json").write_text(json.dumps(cluster_doc, indent=4))
        del objects, cluster_doc
        deployments = generate_deployments(count=args.deployments, replicas=args.replicas, seed=1)
        (folder / "workload.json").write_text(json.dumps(deployments))
        (folder / "config.json").write_text(json.dumps(profile(args.disable)))
        size = (folder / "cluster.json").stat().st_size / MIB
        command = [
            sys.executable, "-c", _REPORTING_PEAK, "simulate", "--format", "json",
            "--cluster", str(folder / "cluster.json"), "--workload", str(folder / "workload.json"),
            "--config", str(folder / "config.json"), "--now", NOW.isoformat(),
        ]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"simulate failed:\n{done.stderr}")
    peak = int(done.stderr.strip().splitlines()[-1]) / 1024
    placed = json.loads(done.stdout)["runs"][0]["placed"]
    print(
        f"cluster file {size:.0f} MiB; simulate took {seconds:.1f} s, placed {placed} pods, "
        f"peak RSS {peak:.0f} MiB"
    )


# ``python -m scoring`` that then prints its peak RSS (VmHWM, KiB). getrusage would count the
# pages the child shared with this process between fork and exec.
_REPORTING_PEAK = """
import sys
from pathlib import Path
from scoring.cli import main
code = main(sys.argv[1:])
status = Path("/proc/self/status").read_text().splitlines()
print([line for line in status if line.startswith("VmHWM:")][0].split()[1], file=sys.stderr)
sys.exit(code)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=float, default=10.0)
    parser.add_argument("--deployments", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=100)
    parser.add_argument("--nrt-nodes", type=int, default=250)
    parser.add_argument("--order", choices=("grouped", "interleaved"), default="grouped")
    parser.add_argument("--skip-uncached", action="store_true")
    parser.add_argument("--per-plugin", action="store_true", help="time each plugin, then stop")
    parser.add_argument(
        "--anti-affinity", action="store_true", help="every Deployment spreads by pod anti-affinity"
    )
    parser.add_argument(
        "--disable", action="append", default=[], metavar="PLUGIN", help="leave a plugin out"
    )
    parser.add_argument(
        "--cli", action="store_true", help="run `python -m scoring simulate` on files instead"
    )
    args = parser.parse_args()
    if args.cli:
        run_cli(args)
        return

    snapshot = cluster(args)
    bound = sum(len(p) for p in snapshot.pods_on_node)
    print(f"cluster: {len(snapshot)} nodes, {bound} bound pods, {len(snapshot.topologies)} NRTs")
    pods = timed("expand and parse the workload", lambda: workload(args, snapshot))
    engine = Engine(load_configuration(profile(args.disable)))
    if args.per_plugin:
        engine.evaluate(pods[0], snapshot, NOW)
        per_plugin(engine, snapshot, pods)
        return
    copies = timed("copy the snapshot twice", lambda: (snapshot.copy(), snapshot.copy()))
    cached = run(engine, copies[0], pods, cache=True)
    print(f"cache: {cached.cache}")
    if not args.skip_uncached:
        uncached = run(engine, copies[1], pods, cache=False)
        same = all(
            a.node == b.node and a.reason == b.reason
            for a, b in zip(cached.placements, uncached.placements, strict=True)
        )
        print(f"speed-up {uncached.seconds / cached.seconds:.2f}x, same decisions: {same}")
        if not same:
            raise SystemExit("cached and uncached runs disagree")
    print(f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
