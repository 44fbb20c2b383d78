"""Engine state memory: one 5,000-node snapshot with every plugin's state, as an engine worker
holds it.

Run outside the test suite:
    .venv/bin/python -m benchmarks.state_memory [--nodes 5000] [--seed 7]

The demo cluster's objects (``generate_cluster``, as ``load_demo_cluster`` stores them) are
encoded to JSON and decoded one by one while the snapshot is built, as an engine worker reads
them from the database, so the input never counts. Then one pending pod is evaluated with the
default profile plus LoadAwareScheduling, LimitAware and NodeResourceTopologyMatch, which
builds every plugin's state. Printed: memory allocated by Python (``tracemalloc``) and the
process's RSS, after the build and after the evaluation, and where the snapshot's memory goes.
Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
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


def rss_mib() -> float:
    """Resident set size now (Linux: /proc/self/status)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
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
    gc.collect()
    rss_before = rss_mib()
    tracemalloc.start()
    start = traced_mib()
    snapshot = Snapshot.from_objects((json.loads(t) for t in texts), warn=lambda _: None)
    built = traced_mib()
    rss_built = rss_mib()
    pending = snapshot.pending[0]
    engine.evaluate(pending, snapshot, NOW)
    evaluated = traced_mib()
    rss_evaluated = rss_mib()
    pods = sum(len(p) for p in snapshot.pods_on_node) + len(snapshot.pending)
    print(f"{len(snapshot)} nodes, {pods} pods, {len(snapshot.node_metrics)} NodeMetrics")
    print(f"snapshot (tracemalloc)              {built - start:7.1f} MiB")
    print(f"snapshot + every plugin's state     {evaluated - start:7.1f} MiB")
    print(f"  of which plugin state             {evaluated - built:7.1f} MiB")
    print(
        f"RSS growth: build {rss_built - rss_before:.1f} MiB, total (tracing on) "
        f"{rss_evaluated - rss_before:.1f} MiB"
    )
    packed = sum(sys.getsizeof(p.source) for pods_ in snapshot.pods_on_node for p in pods_)
    print(f"  Pods' objects as packed JSON      {packed / MIB:7.1f} MiB")


if __name__ == "__main__":
    main()
