"""Engine refresh benchmark: stepping a built 5,000-node snapshot by a refresh's changes.

Run outside the test suite:
    .venv/bin/python -m benchmarks.engine_refresh [--nodes 5000] [--pods-per-node 8]
        [--changed 0.01] [--rounds 7]

Builds the synthetic cluster's snapshot, evaluates one pod with the default profile plus
LoadAwareScheduling, LimitAware and NodeResourceTopologyMatch (every plugin state built), then
prints the median of ``--rounds`` refreshes, each changing ``--changed`` of all objects (a third
each: NodeMetrics reported again, Pods — labels changed, deleted, created bound — and Node
labels changed), of:
- ``Snapshot.apply_changes`` (the snapshot and every plugin state stepped);
- the first evaluation after it (what plugin states rebuild lazily costs), against one more;
- rebuilding the snapshot from the refreshed objects and evaluating once, for comparison.
Then the same for a refresh that also adds and deletes a node (plugin states are rebuilt).
Each as wall and CPU time (the CPU time is what a machine busy with other work distorts least).
Results and the machine they were measured on: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.engine import EXTENDED_PROFILE, NOW
from scoring.config import load_configuration
from scoring.engine import Engine, Framework
from scoring.objects import Pod, parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

Obj = dict[str, Any]
Ref = tuple[str, str, str]


def ref(obj: Obj) -> Ref:
    meta = obj["metadata"]
    return (obj["kind"], meta.get("namespace") or "", meta["name"])


def refresh(
    rng: random.Random, objects: dict[Ref, Obj], changed: float, serial: int, nodes: bool
) -> tuple[list[Obj], list[Ref]]:
    """One refresh's puts and deletes; ``nodes``: also add one node and delete another."""
    by_kind: dict[str, list[Obj]] = {}
    for obj in objects.values():
        by_kind.setdefault(obj["kind"], []).append(obj)
    third = max(1, round(len(objects) * changed / 3))
    put: list[Obj] = []
    delete: list[Ref] = []
    for metric in rng.sample(by_kind["NodeMetric"], third):
        metric = copy.deepcopy(metric)
        metric["status"]["updateTime"] = "2026-11-22T11:59:30Z"
        usage = metric["status"]["nodeMetric"]["nodeUsage"]["resources"]
        usage["cpu"] = f"{rng.randrange(100, 8000)}m"
        put.append(metric)
    node_names = [n["metadata"]["name"] for n in by_kind["Node"]]
    for k, pod in enumerate(rng.sample(by_kind["Pod"], third)):
        if k % 4 == 0:
            delete.append(ref(pod))
            continue
        pod = copy.deepcopy(pod)
        if k % 4 == 1:
            pod["metadata"]["name"] += f"-r{serial}"
            pod["metadata"]["uid"] = f"{pod['metadata']['uid']}-r{serial}"
            pod["spec"]["nodeName"] = rng.choice(node_names)
        else:
            pod["metadata"].setdefault("labels", {})["revision"] = str(serial)
        put.append(pod)
    for node in rng.sample(by_kind["Node"], third):
        node = copy.deepcopy(node)
        node["metadata"]["labels"]["example.com/revision"] = str(serial)
        put.append(node)
    if nodes:
        delete.append(ref(rng.choice(by_kind["Node"])))
        extra = copy.deepcopy(rng.choice(by_kind["Node"]))
        extra["metadata"]["name"] = f"added-{serial}"
        put.append(extra)
    return put, delete


def replay(objects: dict[Ref, Obj], put: list[Obj], delete: list[Ref]) -> None:
    for gone in delete:
        objects.pop(gone, None)
    for obj in put:
        objects[ref(obj)] = obj


def ms(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU milliseconds of ``fn()`` (CPU time is what a busy machine distorts least)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def run(
    label: str,
    args: argparse.Namespace,
    objects: dict[Ref, Obj],
    framework: Framework,
    pod: Pod,
    nodes: bool,
) -> None:
    snapshot = Snapshot.from_objects(list(objects.values()))
    framework.evaluate(pod, snapshot, NOW)
    rng = random.Random(7)
    samples: dict[str, list[tuple[float, float]]] = {
        "apply": [],
        "first": [],
        "next": [],
        "rebuild": [],
    }
    changes = 0
    for serial in range(args.rounds):
        put, delete = refresh(rng, objects, args.changed, serial, nodes)
        changes = len(put) + len(delete)
        samples["apply"].append(ms(lambda p=put, d=delete: snapshot.apply_changes(p, d)))
        samples["first"].append(ms(lambda: framework.evaluate(pod, snapshot, NOW)))
        samples["next"].append(ms(lambda: framework.evaluate(pod, snapshot, NOW)))
        replay(objects, put, delete)
        if serial < 2:
            samples["rebuild"].append(
                ms(lambda: framework.evaluate(pod, Snapshot.from_objects(objects.values()), NOW))
            )
    print(f"{label}: {changes} changes per refresh, median of {args.rounds} (wall, CPU)")
    for key, text in (
        ("apply", "apply_changes"),
        ("first", "first evaluate after it"),
        ("next", "next evaluate"),
        ("rebuild", "rebuild + evaluate (for comparison)"),
    ):
        wall = statistics.median(w for w, _ in samples[key])
        cpu = statistics.median(c for _, c in samples[key])
        print(f"  {text:<38} {wall:8.1f} ms {cpu:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=float, default=8.0)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    generated = generate_cluster(
        nodes=args.nodes,
        pods_per_node=args.pods_per_node,
        pending_pods=20,
        nrt_nodes=args.nodes // 20,
        seed=1,
        now=NOW,
    )
    objects = {ref(obj): obj for obj in generated}
    print(f"{len(objects)} objects")
    framework = Engine(load_configuration(copy.deepcopy(EXTENDED_PROFILE))).frameworks[
        "default-scheduler"
    ]
    pending = next(o for o in generated if o["kind"] == "Pod" and not o["spec"].get("nodeName"))
    pod = parse_pod({**pending, "spec": {**pending["spec"], "schedulerName": "default-scheduler"}})
    run("Nodes, Pods and NodeMetrics changed", args, dict(objects), framework, pod, nodes=False)
    run("... and one node added, one deleted", args, dict(objects), framework, pod, nodes=True)


if __name__ == "__main__":
    main()
