"""The equivalence-class cache never changes a decision.

Hypothesis builds small clusters (resources, zones, taints, cordons, limit ratios, NodeMetrics,
NUMA topologies), a workload drawn from a few pod templates, and a sequence of placements
interleaved with cluster changes: pod removals, Node updates, NodeMetric and NRT replacements or
removals, and a moving clock. The same sequence runs twice, each on its own copy of the snapshot:
through the cache and without it. Every decision must match exactly: the selected node, the
unschedulable message, and per node every filter status and every raw, normalized and total
score.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.config import load_configuration
from scoring.decision import Decision
from scoring.engine import Engine
from scoring.objects import Pod, parse_pod
from scoring.simulation.cache import EquivalenceCache
from scoring.snapshot import Snapshot
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
ZONES = ("a", "b")
# ImageLocality: images nodes may report (name -> size) and one no node has.
IMAGES = {"img/a:1": 300 << 20, "img/b:1": 900 << 20}
POD_IMAGES = (*IMAGES, "img/c:1")
LIMIT_RATIO = "node.koordinator.sh/limit-to-allocatable"
THRESHOLDS = "scheduling.koordinator.sh/usage-thresholds"


def _config(fit: str) -> Engine:
    plugin_config = [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": fit}}},
        {
            "name": "LoadAwareScheduling",
            "args": {
                "usageThresholds": {"cpu": 70, "memory": 80},
                "filterExpiredNodeMetrics": True,
                "nodeMetricExpirationSeconds": 180,
                "enableScheduleWhenNodeMetricsExpired": False,
            },
        },
    ]
    names = ("LoadAwareScheduling", "LimitAware", "NodeResourceTopologyMatch")
    return Engine(load_configuration(single_profile_config(enabled(*names), plugin_config)))


ENGINES = {fit: _config(fit) for fit in ("LeastAllocated", "MostAllocated")}


# -- cluster objects -------------------------------------------------------------------------------


@st.composite
def nodes(draw: st.DrawFn, index: int) -> dict[str, Any]:
    name = f"n{index}"
    allocatable: dict[str, int | str] = {
        "cpu": draw(st.sampled_from([1000, 2000, 4000, 8000])),
        "memory": draw(st.sampled_from([2, 4, 8])) * GI,
        "pods": draw(st.integers(2, 8)),
    }
    if draw(st.booleans()):
        allocatable["example.com/gpu"] = draw(st.integers(0, 2))
    annotations = {}
    if draw(st.integers(0, 3)) == 0:
        annotations[LIMIT_RATIO] = json.dumps({"cpu": draw(st.sampled_from([100, 150, 300, "x%"]))})
    if draw(st.integers(0, 3)) == 0:
        annotations[THRESHOLDS] = json.dumps({"usageThresholds": {"cpu": 50}})
    taints = (
        [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        if draw(st.integers(0, 4)) == 0
        else []
    )
    node = make_node(
        name,
        allocatable,
        labels={"zone": draw(st.sampled_from(ZONES))},
        annotations=annotations,
        taints=taints,
        unschedulable=draw(st.integers(0, 6)) == 0,
    )
    node["status"]["images"] = node_images(draw(st.lists(st.sampled_from(list(IMAGES)))))
    return node


def node_images(names: Sequence[str]) -> list[dict[str, Any]]:
    return [{"names": [name], "sizeBytes": IMAGES[name]} for name in dict.fromkeys(names)]


def usage_metric(node: str, cpu: int, memory: int, age: int) -> dict[str, Any]:
    return node_metric(metric({"cpu": cpu, "memory": memory}, node=node, age=age), NOW_TEXT)


def topology(node: str, cpu: int, gpus: int) -> dict[str, Any]:
    cells = [
        zone(f"node-{i}", {"cpu": cpu, "memory": 2 * GI, "example.com/gpu": gpus}) for i in (0, 1)
    ]
    return nrt(node, cells, attributes={"topologyManagerPolicy": "single-numa-node"})


NOW_TEXT = "2026-11-22T12:00:00Z"

# NodeMetric ages straddle the 180 s expiry, so clock ticks expire some of them.
metrics_args = st.tuples(
    st.integers(0, 6000), st.integers(0, 6 * GI), st.sampled_from([0, 100, 170, 400])
)
topology_args = st.tuples(st.sampled_from([500, 1000, 4000]), st.integers(0, 1))


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(2, 5))
    objects = [draw(nodes(i)) for i in range(count)]
    for i in range(count):
        for k in range(draw(st.integers(0, 2))):
            objects.append(
                make_pod(
                    f"old-{i}-{k}",
                    containers=[make_container("c", {"cpu": draw(st.sampled_from([100, 500]))})],
                    node_name=f"n{i}",
                )
            )
        if draw(st.integers(0, 2)) > 0:
            objects.append(usage_metric(f"n{i}", *draw(metrics_args)))
        if draw(st.integers(0, 2)) == 0:
            objects.append(topology(f"n{i}", *draw(topology_args)))
    return objects


# -- workload ------------------------------------------------------------------------------------


@st.composite
def templates(draw: st.DrawFn, index: int) -> dict[str, Any]:
    cpu = draw(st.sampled_from([100, 250, 500, 1000]))
    memory = draw(st.sampled_from([128, 512, 1024])) * (1 << 20)
    requests: dict[str, int | str] = {"cpu": cpu, "memory": memory}
    guaranteed = draw(st.booleans())
    limits = dict(requests) if guaranteed else {"cpu": 2 * cpu, "memory": 2 * memory}
    if draw(st.integers(0, 3)) == 0:
        requests["example.com/gpu"] = limits["example.com/gpu"] = 1
    spec: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"zone": draw(st.sampled_from(ZONES))}
    if draw(st.integers(0, 3)) == 0:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if draw(st.integers(0, 3)) == 0:
        term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": term}
                ]
            }
        }
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": f"app{index}",
        "uid": f"rs-{index}",
        "controller": True,
    }
    pod = make_pod(
        f"app{index}",
        containers=[make_container("c", requests, limits, image=draw(st.sampled_from(POD_IMAGES)))],
        spec=spec,
    )
    pod["metadata"]["ownerReferences"] = [owner]
    return pod


@dataclass(frozen=True)
class Place:
    template: int


@dataclass(frozen=True)
class RemovePod:
    choice: int


@dataclass(frozen=True)
class UpdateNode:
    node: int
    cpu: int
    zone: str
    cordon: bool
    images: tuple[str, ...]


@dataclass(frozen=True)
class SetMetric:
    node: int
    args: tuple[int, int, int] | None


@dataclass(frozen=True)
class SetTopology:
    node: int
    args: tuple[int, int] | None


@dataclass(frozen=True)
class Tick:
    seconds: int


def steps(templates_count: int) -> st.SearchStrategy[list[Any]]:
    node = st.integers(0, 4)
    cpu = st.sampled_from([1000, 2000, 8000])
    update = st.builds(
        UpdateNode,
        node,
        cpu,
        st.sampled_from(ZONES),
        st.integers(0, 3).map(lambda k: k == 0),
        st.lists(st.sampled_from(list(IMAGES))).map(tuple),
    )
    step = st.one_of(
        st.builds(Place, st.integers(0, templates_count - 1)),
        st.builds(Place, st.integers(0, templates_count - 1)),
        st.builds(Place, st.integers(0, templates_count - 1)),
        st.builds(RemovePod, st.integers(0, 50)),
        update,
        update,
        st.builds(SetMetric, node, st.none() | metrics_args),
        st.builds(SetTopology, node, st.none() | topology_args),
        st.builds(Tick, st.sampled_from([0, 15, 90, 240])),
        st.builds(Tick, st.sampled_from([15, 90])),
    )
    return st.lists(step, min_size=4, max_size=24)


# -- running both engines ------------------------------------------------------------------------


class Run:
    """One side of the comparison: a snapshot copy, its clock, its placed pods."""

    def __init__(self, snapshot: Snapshot, engine: Engine, cache: EquivalenceCache | None) -> None:
        self.snapshot = snapshot
        self.engine = engine
        self.cache = cache
        self.now = NOW
        self.placed: list[Pod] = []

    def evaluate(self, pod: Pod) -> Decision:
        framework = self.engine.framework_for(pod)
        bound = None if self.cache is None else self.cache.bind(pod, self.snapshot, self.now)
        return framework.evaluate(pod, self.snapshot, self.now, bound)

    def place(self, pod: Pod) -> Decision:
        decision = self.evaluate(pod)
        if decision.selected_index is not None:
            self.engine.framework_for(pod).reserve(decision)
            self.placed.append(pod)
        return decision

    def apply(self, step: Any, objects: dict[str, dict[str, Any]]) -> None:
        snap = self.snapshot
        if isinstance(step, RemovePod) and self.placed:
            snap.remove_pod(self.placed.pop(step.choice % len(self.placed)))
        elif isinstance(step, UpdateNode) and step.node < len(snap):
            obj = json.loads(json.dumps(objects[snap.node_names[step.node]]))
            obj["status"]["allocatable"]["cpu"] = f"{step.cpu}m"
            obj["metadata"]["labels"]["zone"] = step.zone
            obj["spec"]["unschedulable"] = step.cordon
            obj["status"]["images"] = node_images(step.images)
            snap.update_node(obj)
        elif isinstance(step, SetMetric) and step.node < len(snap):
            name = snap.node_names[step.node]
            snap.set_node_metric(
                name, None if step.args is None else usage_metric(name, *step.args)
            )
        elif isinstance(step, SetTopology) and step.node < len(snap):
            name = snap.node_names[step.node]
            snap.set_topology(name, None if step.args is None else topology(name, *step.args))
        elif isinstance(step, Tick):
            self.now = self.now + timedelta(seconds=step.seconds)


def assert_same(cached: Decision, plain: Decision) -> None:
    assert cached.selected_node == plain.selected_node
    assert cached.error == plain.error
    assert cached.summary() == plain.summary()
    assert cached.feasible.tolist() == plain.feasible.tolist()
    n = len(plain.cycle.snapshot)
    for a, b in zip(cached.filters, plain.filters, strict=True):
        assert a.plugin == b.plugin
        assert [a.result.status(i) for i in range(n)] == [b.result.status(i) for i in range(n)]
    assert [s.plugin for s in cached.scores] == [s.plugin for s in plain.scores]
    for a, b in zip(cached.scores, plain.scores, strict=True):
        assert a.raw.tolist() == b.raw.tolist(), a.plugin
        assert a.normalized.tolist() == b.normalized.tolist(), a.plugin
    assert np.array_equal(cached.totals, plain.totals)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_cached_engine_decides_exactly_like_the_uncached_one(data: st.DataObject) -> None:
    objects = data.draw(clusters(), label="cluster")
    count = data.draw(st.integers(1, 3), label="templates")
    pods = [data.draw(templates(i), label=f"template {i}") for i in range(count)]
    plan = data.draw(steps(count), label="steps")
    engine = ENGINES[data.draw(st.sampled_from(sorted(ENGINES)), label="fit strategy")]
    snapshot = Snapshot.from_objects(objects, warn=lambda _: None)
    by_name = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
    cache = EquivalenceCache(max_classes=3)
    cached, plain = Run(snapshot.copy(), engine, cache), Run(snapshot.copy(), engine, None)
    probes = [parse_pod(template) for template in pods]
    serial = 0
    for step in plan:
        if isinstance(step, Place):
            serial += 1
            manifest = json.loads(json.dumps(pods[step.template]))
            manifest["metadata"]["name"] = f"{manifest['metadata']['name']}-{serial}"
            manifest["metadata"]["uid"] = f"uid-{serial}"
            pod = parse_pod(manifest)
            assert_same(cached.place(pod), plain.place(pod))
        else:
            cached.apply(step, by_name)
            plain.apply(step, by_name)
            for probe in probes:  # every class, cached before the change, is checked after it
                assert_same(cached.evaluate(probe), plain.evaluate(probe))
    assert cached.snapshot.requested.tolist() == plain.snapshot.requested.tolist()
