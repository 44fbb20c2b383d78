"""Engine state memory: one 5,000-node snapshot with every plugin's state, as an engine worker
holds it.

Run outside the test suite:
    .venv/bin/python -m benchmarks.state_memory [--nodes 5000] [--seed 7]

The demo cluster's objects (``generate_cluster``, as ``load_demo_cluster`` stores them) are
encoded to JSON and decoded one by one while the snapshot is built, as an engine worker reads
them from the database, so the input never counts. Then one pending pod is evaluated with the
default profile plus LoadAwareScheduling, LimitAware and NodeResourceTopologyMatch, which
builds every plugin's state. Printed: memory allocated by Python (``tracemalloc``) after the
build and after the evaluation, and the process's RSS.
Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.engine import EXTENDED_PROFILE
from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 28, tzinfo=UTC)
MIB = 2**20


def status_mib(field: str) -> float:
    """A memory figure of this process (Linux: /proc/self/status, e.g. VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def traced_mib() -> float:
    gc.collect()
    return tracemalloc.get_traced_memory()[0] / MIB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    texts = [json.dumps(o) for o in generate_cluster(nodes=args.nodes, seed=args.seed, now=NOW)]
    engine = Engine(load_configuration(EXTENDED_PROFILE))
    tracemalloc.start()
    start = traced_mib()
    snapshot = Snapshot.from_objects((json.loads(t) for t in texts), warn=lambda _: None)
    built = traced_mib()
    engine.evaluate(snapshot.pending[0], snapshot, NOW)
    evaluated = traced_mib()
    tracemalloc.stop()
    pods = sum(len(p) for p in snapshot.pods_on_node) + len(snapshot.pending)
    print(f"{len(snapshot)} nodes, {pods} pods, {len(snapshot.node_metrics)} NodeMetrics")
    print(f"snapshot                            {built - start:7.1f} MiB")
    print(f"snapshot + every plugin's state     {evaluated - start:7.1f} MiB")
    print(f"  of which plugin state             {evaluated - built:7.1f} MiB")
    rss, peak = status_mib("VmRSS"), status_mib("VmHWM")
    print(
        f"process RSS {rss:.0f} MiB, peak {peak:.0f} MiB (the JSON texts and tracemalloc's own "
        "records included)"
    )


if __name__ == "__main__":
    main()
