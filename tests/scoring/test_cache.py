"""The equivalence-class cache recomputes exactly the (plugin, node) pairs a change affects."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from scoring.config import load_configuration
from scoring.engine import Engine, Framework
from scoring.framework import Cycle, FilterResult, Plugin, unschedulable
from scoring.objects import Pod, parse_pod
from scoring.simulation.cache import EquivalenceCache
from scoring.simulation.journal import ChangeJournal, journal, kind_mask
from scoring.snapshot import NODE_EVENT, NODE_METRIC_EVENT, POD_EVENT, TOPOLOGY_EVENT, Snapshot
from tests.scoring.builders import (
    enabled,
    make_container,
    make_node,
    make_pod,
    single_profile_config,
)
from tests.scoring.loadaware_vectors import metric, node_metric
from tests.scoring.nrt_builders import NOW, nrt, zone

GI = 1 << 30
NOW_TEXT = "2026-11-22T12:00:00Z"
CONFIG = single_profile_config(
    enabled("LoadAwareScheduling", "LimitAware", "NodeResourceTopologyMatch")
)


def cluster() -> Snapshot:
    objects: list[dict[str, Any]] = [
        make_node(f"n{i}", {"cpu": 4000, "memory": 8 * GI, "pods": 10}) for i in range(4)
    ]
    objects += [
        node_metric(metric({"cpu": 500, "memory": GI}, node=f"n{i}"), NOW_TEXT) for i in range(4)
    ]
    cells = [zone(f"node-{i}", {"cpu": 2000, "memory": 4 * GI}) for i in (0, 1)]
    objects.append(nrt("n3", cells, attributes={"topologyManagerPolicy": "single-numa-node"}))
    return Snapshot.from_objects(objects, warn=lambda _: None)


def web(index: int, cpu: int = 500) -> Pod:
    manifest = make_pod(
        f"web-{index}",
        containers=[make_container("app", {"cpu": cpu, "memory": GI}, {"cpu": cpu, "memory": GI})],
    )
    manifest["metadata"]["uid"] = f"uid-{index}"
    return parse_pod(manifest)


class Spy:
    """Counts full Filter/Score runs and the nodes of subset runs, per plugin."""

    def __init__(self, framework: Framework, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full: dict[str, int] = defaultdict(int)
        self.subset: dict[str, list[int]] = defaultdict(list)
        self.scored: dict[str, list[int]] = defaultdict(list)
        for plugin in framework.instances.values():
            self._wrap(plugin, monkeypatch)

    def _wrap(self, plugin: Plugin, monkeypatch: pytest.MonkeyPatch) -> None:
        name, filter_all, filter_some, score = (
            plugin.name,
            plugin.filter,
            plugin.filter_nodes,
            plugin.score,
        )

        def full(cycle: Cycle) -> FilterResult:
            self.full[name] += 1
            return filter_all(cycle)

        def some(cycle: Cycle, nodes: np.ndarray) -> FilterResult:
            self.subset[name] += nodes.tolist()
            return filter_some(cycle, nodes)

        def scores(cycle: Cycle, nodes: np.ndarray) -> np.ndarray:
            self.scored[name] += nodes.tolist()
            return score(cycle, nodes)

        monkeypatch.setattr(plugin, "filter", full)
        monkeypatch.setattr(plugin, "filter_nodes", some)
        monkeypatch.setattr(plugin, "score", scores)

    def reset(self) -> None:
        self.full.clear()
        self.subset.clear()
        self.scored.clear()


@pytest.fixture
def setup(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Framework, Snapshot, Spy]]:
    engine = Engine(load_configuration(CONFIG))
    framework = engine.frameworks["default-scheduler"]
    yield framework, cluster(), Spy(framework, monkeypatch)


def evaluate(framework: Framework, snapshot: Snapshot, cache: EquivalenceCache, pod: Pod) -> Any:
    return framework.evaluate(pod, snapshot, NOW, cache.bind(pod, snapshot, NOW))


def test_journal_lists_changed_nodes_of_the_requested_kinds() -> None:
    snapshot = cluster()
    log = journal(snapshot)
    snapshot.assume_pod(web(1), 1)
    snapshot.set_node_metric("n0", None)
    snapshot.update_node(make_node("n2", {"cpu": 1000, "memory": GI, "pods": 10}))
    snapshot.set_topology("n3", None)
    assert log.changed_since(0, kind_mask([POD_EVENT])).tolist() == [1]
    assert log.changed_since(0, kind_mask([NODE_METRIC_EVENT, NODE_EVENT])).tolist() == [0, 2]
    assert log.changed_since(1, kind_mask([TOPOLOGY_EVENT, POD_EVENT])).tolist() == [3]
    assert log.changed_since(4, kind_mask([POD_EVENT, NODE_EVENT])).tolist() == []
    assert len(log) == 4


def test_long_runs_of_changes_are_read_with_numpy_to_the_same_result() -> None:
    log = ChangeJournal(cluster())
    for k in range(200):
        log.node_event(NODE_EVENT if k % 3 else NODE_METRIC_EVENT, k % 7)
    assert log.changed_since(0, kind_mask([NODE_METRIC_EVENT])).tolist() == sorted(
        {k % 7 for k in range(200) if k % 3 == 0}
    )
    assert log.changed_since(199, kind_mask([NODE_METRIC_EVENT])).tolist() == []


def test_a_placement_recomputes_only_the_resource_plugins_on_that_node(
    setup: tuple[Framework, Snapshot, Spy],
) -> None:
    framework, snapshot, spy = setup
    cache = EquivalenceCache()
    first = evaluate(framework, snapshot, cache, web(1))
    framework.reserve(first)
    node = first.selected_index
    spy.reset()
    evaluate(framework, snapshot, cache, web(2))
    assert dict(spy.full) == {}  # nothing computed on every node again
    resource_plugins = {
        "NodeResourcesFit",
        "LimitAware",
        "LoadAwareScheduling",
        "NodeResourceTopologyMatch",
    }  # NodePorts too, for pods with host ports (its PreFilter skips the others)
    assert {p: n for p, n in spy.subset.items() if n} == {name: [node] for name in resource_plugins}
    # ImageLocality is never cached (an image's spread counts every node): it scores them all.
    uncached = spy.scored.pop("ImageLocality")
    assert len(uncached) > 1
    assert set(spy.scored) <= resource_plugins | {"NodeResourcesBalancedAllocation"}
    assert all(nodes == [node] for nodes in spy.scored.values())


@pytest.mark.parametrize(
    ("change", "plugins"),
    [
        (lambda s: s.set_node_metric("n1", None), {"LoadAwareScheduling"}),
        (lambda s: s.set_topology("n1", None), {"NodeResourceTopologyMatch"}),
        (
            lambda s: s.update_node(make_node("n1", {"cpu": 2000, "memory": GI, "pods": 10})),
            {
                "NodeUnschedulable",
                "TaintToleration",  # NodeAffinity too, for pods its PreFilter does not skip
                "NodeResourcesFit",
                "LimitAware",
                "LoadAwareScheduling",
                "NodeResourceTopologyMatch",
            },
        ),
        (lambda s: s.remove_pod(s.pods_on_node[1][0]), None),
    ],
    ids=["node-metric", "topology", "node", "pod-removal"],
)
def test_a_change_invalidates_the_plugins_that_depend_on_it_on_that_node_only(
    setup: tuple[Framework, Snapshot, Spy], change: Any, plugins: set[str] | None
) -> None:
    framework, snapshot, spy = setup
    cache = EquivalenceCache()
    snapshot.assume_pod(web(0, cpu=100), 1)  # something to remove
    evaluate(framework, snapshot, cache, web(1))
    spy.reset()
    change(snapshot)
    evaluate(framework, snapshot, cache, web(2))
    if plugins is None:  # a removal is a pod event, like a placement
        plugins = {
            "NodeResourcesFit",
            "LimitAware",
            "LoadAwareScheduling",
            "NodeResourceTopologyMatch",
        }
    # Plugins without their own filter_nodes run Filter on every node and keep node 1.
    assert set(spy.full) <= {"NodeUnschedulable", "TaintToleration", "NodeAffinity"}
    assert {p: n for p, n in spy.subset.items() if n} == {name: [1] for name in plugins}


def test_a_new_now_recomputes_the_clock_dependent_plugin_everywhere(
    setup: tuple[Framework, Snapshot, Spy],
) -> None:
    framework, snapshot, spy = setup
    cache = EquivalenceCache()
    evaluate(framework, snapshot, cache, web(1))
    spy.reset()
    later = NOW + timedelta(minutes=5)
    pod = web(2)
    decision = framework.evaluate(pod, snapshot, later, cache.bind(pod, snapshot, later))
    assert dict(spy.full) == {"LoadAwareScheduling": 1}
    assert not any(spy.subset.values())
    # Every NodeMetric is now older than the default 180 s expiry.
    assert decision.summary() == "0/4 nodes are available: 4 node(s) nodeMetric expired."


def test_results_handed_out_earlier_never_change(setup: tuple[Framework, Snapshot, Spy]) -> None:
    framework, snapshot, _ = setup
    cache = EquivalenceCache()
    for index in range(1, 30):
        decision = evaluate(framework, snapshot, cache, web(index, cpu=900))
        if index == 1:
            first = decision
            before = [o.result.status_ids.copy() for o in first.filters]
        if decision.selected_index is None:
            break
        framework.reserve(decision)
    assert [o.result.status_ids.tolist() for o in first.filters] == [b.tolist() for b in before]
    assert decision.selected_index is None  # the cluster filled up meanwhile
    assert decision.summary() == "0/4 nodes are available: 4 node(s) cpu usage exceed threshold."


def test_classes_beyond_the_limit_are_evicted_least_recently_used_first(
    setup: tuple[Framework, Snapshot, Spy],
) -> None:
    framework, snapshot, spy = setup
    cache = EquivalenceCache(max_classes=2)
    small, medium, large = web(1, cpu=100), web(2, cpu=200), web(3, cpu=300)
    for pod in (small, medium, small, large):  # large evicts medium (small was used later)
        evaluate(framework, snapshot, cache, pod)
    assert cache.stats.evictions == 1
    spy.reset()
    evaluate(framework, snapshot, cache, small)
    assert dict(spy.full) == {}
    evaluate(framework, snapshot, cache, medium)
    assert spy.full["NodeResourcesFit"] == 1


def test_another_snapshot_starts_the_cache_afresh(setup: tuple[Framework, Snapshot, Spy]) -> None:
    framework, snapshot, spy = setup
    cache = EquivalenceCache()
    evaluate(framework, snapshot, cache, web(1))
    other = snapshot.copy()
    spy.reset()
    evaluate(framework, other, cache, web(2))
    assert spy.full["NodeResourcesFit"] == 1


class Unknown(Plugin):
    """A plugin that declares no dependencies: never cached."""

    name = "Unknown"
    points = frozenset({"filter"})
    calls = 0

    def filter(self, cycle: Cycle) -> FilterResult:
        Unknown.calls += 1
        n = len(cycle.snapshot)
        return FilterResult.from_masks(n, [(np.arange(n) == 0, unschedulable("first"))])


def test_plugins_without_declared_dependencies_run_every_time() -> None:
    snapshot = cluster()
    cache = EquivalenceCache()
    plugin = Unknown({})
    for index in range(3):
        pod = web(index)
        results = cache.bind(pod, snapshot, NOW)
        verdict = results.filter(plugin, Cycle(pod, snapshot, NOW))
        assert verdict.passed.tolist() == [False, True, True, True]
    assert Unknown.calls == 3
    assert cache.stats.filter_hits == cache.stats.filter_misses == 0


def test_results_cheaper_to_recompute_than_to_look_up_are_not_cached(
    setup: tuple[Framework, Snapshot, Spy],
) -> None:
    framework, snapshot, spy = setup
    cache = EquivalenceCache()
    manifest = make_pod("ported", containers=[make_container("c", {"cpu": 100})])
    manifest["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    manifest["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchFields": []}}
            ]
        }
    }
    pod = parse_pod(manifest)
    for _ in range(3):
        evaluate(framework, snapshot, cache, pod)
    assert spy.full["NodePorts"] == 3  # ("NodePorts", "filter") is in NOT_WORTH_CACHING
    assert len(spy.scored["NodeAffinity"]) == 3 * 4  # ("NodeAffinity", "score") too
    assert spy.full["NodeResourcesFit"] == 1
    assert cache.cached(framework.instances["NodeAffinity"], "filter")
    assert not cache.cached(framework.instances["NodeAffinity"], "score")
