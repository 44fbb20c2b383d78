"""Engine benchmark: snapshot build time and one-pod evaluation latency over a large cluster.

Run outside the test suite:
    .venv/bin/python -m benchmarks.engine [--nodes 5000] [--pods-per-node 10]

Prints the synthetic cluster's size, the time to build the snapshot, and median / p99 latency of
evaluating one pending pod against every node, for the default profile and for a profile that
adds the Koordinator and scheduler-plugins plugins the engine models.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

EXTENDED_PROFILE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "LoadAwareScheduling", "weight": 1},
                        {"name": "LimitAware", "weight": 1},
                        {"name": "NodeResourceTopologyMatch", "weight": 1},
                    ]
                }
            },
        }
    ],
}


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def report(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{label:<44} median {statistics.median(samples):8.3f} ms   p99 {p99:8.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    start = time.perf_counter()
    objects = generate_cluster(
        nodes=args.nodes, pods_per_node=args.pods_per_node, pending_pods=50, seed=1, now=NOW
    )
    print(f"generated {len(objects)} objects in {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    snapshot = Snapshot.from_objects(objects)
    bound = sum(len(p) for p in snapshot.pods_on_node)
    print(
        f"snapshot: {len(snapshot)} nodes, {bound} bound pods, {len(snapshot.pending)} pending, "
        f"built in {time.perf_counter() - start:.2f} s"
    )
    pod = next(p for p in snapshot.pending if p.scheduler_name == "default-scheduler")
    pod = parse_pod(pod.raw)
    for label, engine in (
        ("default profile", Engine()),
        ("default + LoadAware, LimitAware, NRT", Engine(load_configuration(EXTENDED_PROFILE))),
    ):
        engine.evaluate(pod, snapshot, NOW)  # warm plugin state built once per snapshot
        report(
            f"evaluate 1 pod / {len(snapshot)} nodes, {label}",
            timed(lambda e=engine: e.evaluate(pod, snapshot, NOW), args.repeat),
        )
        decision = engine.evaluate(pod, snapshot, NOW)
        report(
            "  + serialize the full explanation",
            timed(lambda d=decision: d.to_dict(), max(5, args.repeat // 20)),
        )


if __name__ == "__main__":
    main()
