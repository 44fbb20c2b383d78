"""Stored decision size: bytes per decision on the 5,000-node demo cluster, and codec times.

Run outside the test suite:
    .venv/bin/python -m benchmarks.decisions [--nodes 5000] [--pods 6] [--repeat 3]

Creates a fresh SQLite database in a temporary directory (``benchmarks.sqlite_settings``,
whatever DATABASE_URL says), migrates it, loads the demo cluster (``load_demo_cluster --nodes
N``), evaluates its first pending ``default-scheduler`` pods with the default profile plus
LoadAwareScheduling, LimitAware and NodeResourceTopologyMatch (``EXTENDED_PROFILE``), records
each decision as the API does, and prints per decision: the explanation's JSON size, the bytes
stored for it (the encoded explanation; the first decision on the snapshot also stores the
base the others are compressed against), and the times to build the JSON,
pack its columns from the JSON (``pack``) and from the decision's arrays (``pack_decision``,
what recording does), encode them against the base, decode all of it, and decode the API's
default page. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import django

from benchmarks.engine import EXTENDED_PROFILE


def _fresh_database() -> Path:
    """Django on an empty SQLite file (``benchmarks.sqlite_settings``), migrated."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.sqlite_settings"
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return Path(settings.DATABASES["default"]["NAME"])


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=6, help="Pending pods to evaluate.")
    parser.add_argument("--repeat", type=int, default=3, help="Timings: median of this many.")
    args = parser.parse_args()

    database = _fresh_database()
    try:
        run(args.nodes, args.pods, args.repeat, database)
    finally:
        shutil.rmtree(database.parent, ignore_errors=True)


def run(nodes: int, pods: int, repeat: int, database: Path) -> None:
    from policy.clusters import services as cluster_services
    from policy.clusters.engine import engine_for, snapshot_for
    from policy.decisions import evaluation, questions, services
    from policy.decisions.models import ExplanationBase, PlacementDecision
    from scoring import decision_codec

    start = time.perf_counter()
    stored = cluster_services.load_demo_cluster(nodes=nodes)
    print(f"demo cluster: {stored.node_count} nodes, loaded in {time.perf_counter() - start:.1f} s")
    snapshot = snapshot_for(stored)
    engine = engine_for(EXTENDED_PROFILE)
    choice = evaluation.ConfigurationChoice(EXTENDED_PROFILE, None, None)
    pending = [p for p in snapshot.pending if p.scheduler_name == "default-scheduler"][:pods]
    print(
        f"{'pod':<40} {'feasible':>8} {'JSON':>10} {'stored':>9} {'to_dict':>8} {'pack':>6} "
        f"{'pack_decision':>13} "
        f"{'encode':>7} {'record':>7} {'decode':>7} {'page':>6}"
    )
    sizes = []
    for pod in pending:
        decision = engine.evaluate(pod, snapshot, stored.taken_at)
        build = _median_ms(decision.to_dict, repeat)
        before = database.stat().st_size
        began = time.perf_counter()
        answer = questions.answer_for(decision, stored, choice)
        row = services.record(stored.cluster, pod.raw, evaluation.Evaluated(answer), digest=pod.key)
        recorded = (time.perf_counter() - began) * 1000
        row = PlacementDecision.objects.get(pk=row.pk)
        data = bytes(row.explanation_data)
        base = row.explanation_base.base() if row.explanation_base else None
        explanation = decision_codec.decode(data, base)
        assert explanation == decision.to_dict(), "the stored explanation differs"
        text = len(json.dumps(explanation, separators=(",", ":")))
        stored_bytes = len(data)
        sizes.append(stored_bytes)
        packing = _median_ms(lambda e=explanation: decision_codec.pack(e), repeat)
        packed = decision_codec.pack(explanation)
        direct = _median_ms(lambda d=decision: decision_codec.pack_decision(d), repeat)
        assert decision_codec.pack_decision(decision) == packed, "pack_decision differs"
        encode = _median_ms(lambda p=packed, b=base: decision_codec.encode(p, b), repeat)
        decode = _median_ms(lambda d=data, b=base: decision_codec.decode(d, b), repeat)

        def page(d: bytes = data, b: Any = base) -> None:
            reader = decision_codec.StoredExplanation(d, b)
            reader.to_dict(reader.select().positions)

        paged = _median_ms(page, repeat)
        print(
            f"{pod.key:<40} {len(decision.feasible):>8} {text:>10,} {stored_bytes:>9,} "
            f"{build:>6.0f}ms {packing:>4.0f}ms {direct:>11.0f}ms {encode:>5.0f}ms "
            f"{recorded:>5.0f}ms {decode:>5.0f}ms {paged:>4.0f}ms"
        )
        growth = database.stat().st_size - before
        selection = decision_codec.StoredExplanation(data, base).select()
        print(
            f"{'':<40} database file grew by {growth:,} bytes; default API page: "
            f"{len(selection.positions)} nodes, {len(selection.groups)} filtered groups"
        )
    bases = [len(bytes(b.data)) for b in ExplanationBase.objects.all()]
    print(
        f"stored bytes per decision: median {statistics.median(sizes):,.0f}, max {max(sizes):,} "
        f"({len(sizes)} decisions); bases: {len(bases)} of {sum(bases):,} bytes; "
        f"with the bases shared out: {(sum(sizes) + sum(bases)) / len(sizes):,.0f} per decision"
    )


if __name__ == "__main__":
    main()
