"""Plugins evaluated on a few nodes give exactly their verdicts and scores over all nodes.

The cache recomputes stale nodes through ``Plugin.filter_nodes`` and ``Plugin.score`` on a
subset; several plugins take a cheaper per-node path for a handful of nodes. Both must agree
with the full evaluation, on a realistic synthetic cluster before and after placements.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from scoring.config import load_configuration
from scoring.engine import Engine, Framework
from scoring.framework import Code, Cycle
from scoring.objects import Pod, parse_pod
from scoring.simulation.synthetic_workload import generate_deployments
from scoring.simulation.workload import expand_workload
from scoring.snapshot import IntArray, Snapshot
from scoring.synthetic import generate_cluster
from tests.scoring.builders import enabled, single_profile_config

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
PLUGINS = ("LoadAwareScheduling", "LimitAware", "NodeResourceTopologyMatch")


def engine(strategy: str) -> Engine:
    scoring: dict[str, Any] = {"type": strategy}
    if strategy == "RequestedToCapacityRatio":
        shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
        scoring["requestedToCapacityRatio"] = {"shape": shape}
    fit = {"name": "NodeResourcesFit", "args": {"scoringStrategy": scoring}}
    return Engine(load_configuration(single_profile_config(enabled(*PLUGINS), [fit])))


@pytest.fixture(scope="module")
def cluster() -> tuple[Snapshot, list[Pod]]:
    objects = generate_cluster(nodes=80, pods_per_node=6, pending_pods=0, nrt_nodes=8, now=NOW)
    snapshot = Snapshot.from_objects(objects, warn=lambda _: None)
    deployments = generate_deployments(count=20, replicas=1, seed=5)
    pods = [parse_pod(p) for p in expand_workload(deployments, seed=5)]
    return snapshot, pods


def subsets(n: int) -> list[IntArray]:
    rng = np.random.default_rng(11)
    picks = [np.array([0]), np.array([n - 1]), np.sort(rng.choice(n, 3, replace=False))]
    picks += [
        np.sort(rng.choice(n, 9, replace=False)),
        np.sort(rng.choice(n, n // 3, replace=False)),
    ]
    return [p.astype(np.int64) for p in picks]


def check(framework: Framework, pod: Pod, snapshot: Snapshot) -> None:
    cycle = Cycle(pod, snapshot, NOW)
    for plugin in framework.pre_filters:
        plugin.pre_filter(cycle)
    everywhere = np.arange(len(snapshot), dtype=np.int64)
    for plugin in framework.filters:
        full = plugin.filter(cycle)
        for nodes in subsets(len(snapshot)):
            part = plugin.filter_nodes(cycle, nodes)
            assert len(part.status_ids) == len(nodes)
            expected = [full.status(int(i)) for i in nodes]
            assert [part.status(k) for k in range(len(nodes))] == expected, plugin.name
    skipped = {
        p.name for p in framework.pre_scores if p.pre_score(cycle, everywhere).code == Code.SKIP
    }
    for scored in framework.scores:
        plugin = scored.plugin
        if plugin.name in skipped:
            continue
        full_scores = plugin.score(cycle, everywhere)
        for nodes in subsets(len(snapshot)):
            assert plugin.score(cycle, nodes).tolist() == full_scores[nodes].tolist(), plugin.name


@pytest.mark.parametrize(
    "strategy", ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
)
def test_subset_evaluation_matches_full_evaluation(
    cluster: tuple[Snapshot, list[Pod]], strategy: str
) -> None:
    base, pods = cluster
    snapshot = base.copy()
    run = engine(strategy)
    framework = run.frameworks["default-scheduler"]
    for pod in pods:
        check(framework, pod, snapshot)
        decision = framework.evaluate(pod, snapshot, NOW)
        if decision.selected_index is not None:
            framework.reserve(decision)
    assert sum(len(p) for p in snapshot.pods_on_node) > sum(len(p) for p in base.pods_on_node)
