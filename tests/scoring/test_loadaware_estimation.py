"""Which existing pods are estimated and what they add; Reserve / Unreserve accounting.

pod_assign_cache.go: a pod counts ``max(0, estimate - reported usage)`` while its usage is not
reported, while it was scheduled within the report interval before the metric's updateTime, or
while a forced-estimation deadline is after updateTime. Reserve adds the pod stamped "now".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.framework import Cycle
from scoring.objects import parse_pod
from scoring.plugins.loadaware import LoadAwareScheduling
from scoring.plugins.loadaware.args import default_args
from scoring.plugins.loadaware.state import LoadAwareState
from scoring.timeutil import parse_time
from tests.scoring.loadaware_vectors import (
    CORES,
    GI,
    NOW,
    cluster_objects,
    config,
    metric,
    node,
    node_metric,
    pod,
    pod_object,
    pod_usage,
    run_plugin,
    snapshot_of,
    vector,
)

NODE = {"cpu": 100 * CORES, "memory": 100 * GI}
KEY = "scheduling.koordinator.sh/usage-thresholds"
TWENTY = {"cpu": 20 * CORES}  # estimates 17 cores (and the 200Mi memory default)
DEFAULT_MEMORY = 200 * 1024 * 1024


def state_of(v: dict[str, Any]) -> tuple[LoadAwareScheduling, Cycle, LoadAwareState]:
    plugin, cycle, _, _ = run_plugin(v)
    return plugin, cycle, plugin.state(cycle)


def existing_cpu(
    existing: dict[str, Any],
    *,
    args: dict[str, Any] | None = None,
    usage: int | None = 5,
    age: float = 0,
    interval: int | None = 60,
    reported_priority: str | None = None,
) -> tuple[int, int, int, int]:
    """(nodeDelta, prodDelta, nodeEstimated, prodUsage) in cpu millicores for one bound pod whose
    usage koordlet reports as ``usage`` cores (None: not reported)."""
    pods = (
        []
        if usage is None
        else [pod_usage(existing["name"], {"cpu": usage * CORES}, reported_priority)]
    )
    v = vector(
        args,
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES}, age=age, interval=interval, pods=pods)],
        existing=[existing],
        incoming=pod(),
    )
    _, _, state = state_of(v)
    cache = state.cache
    column = state.resources.index("cpu")
    return (
        int(cache.node_delta[column, 0]),
        int(cache.prod_delta[column, 0]),
        int(cache.node_estimated[column, 0]),
        int(cache.prod_usage[column, 0]),
    )


def bound(age: float | None = None, **kwargs: Any) -> dict[str, Any]:
    """A (Burstable, so koord-prod) pod bound to the node, requesting 20 cores, scheduled ``age``
    seconds ago."""
    return pod("p", TWENTY, node="test-node-1", scheduled_age=age, **kwargs)


# -- the report interval ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "delta"),
    [
        (30, 12 * CORES),  # within the interval: estimate 17 - reported 5
        (59, 12 * CORES),
        (60, 0),  # updateTime - interval == timestamp: not strictly before
        (3600, 0),
    ],
)
def test_report_interval(age: float, delta: int) -> None:
    assert existing_cpu(bound(age))[0] == delta


def test_custom_report_interval() -> None:
    assert existing_cpu(bound(200), interval=300)[0] == 12 * CORES
    assert existing_cpu(bound(200), interval=None)[0] == 0  # default 60 s


def test_interval_is_counted_back_from_update_time_not_now() -> None:
    # Metric updated 100 s ago: a pod scheduled 150 s ago is within updateTime - 60 s.
    assert existing_cpu(bound(150), age=100)[0] == 12 * CORES
    assert existing_cpu(bound(161), age=100)[0] == 0


def test_unreported_pod_is_estimated_forever() -> None:
    assert existing_cpu(bound(10**6), usage=None)[0] == 17 * CORES


def test_usage_above_the_estimate_adds_nothing() -> None:
    assert existing_cpu(bound(10), usage=30)[0] == 0


def test_pod_without_pod_scheduled_is_stamped_now() -> None:
    assert existing_cpu(bound(None))[0] == 12 * CORES


def test_every_estimate_counts_in_node_estimated() -> None:
    assert existing_cpu(bound(3600))[2] == 17 * CORES
    assert existing_cpu(bound(3600, labels={"koordinator.sh/priority-class": "koord-free"}))[2] == 0


# -- forced estimation windows ----------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "delta"), [(3601, 12 * CORES), (3600, 0), (0, 0), (-5, 0)])
def test_estimated_seconds_after_pod_scheduled(seconds: int, delta: int) -> None:
    """Deadline = PodScheduled + seconds; it must be strictly after updateTime (= now here)."""
    args = {"estimatedSecondsAfterPodScheduled": seconds}
    assert existing_cpu(bound(3600), args=args)[0] == delta


def test_initialized_window_replaces_the_scheduled_window() -> None:
    args = {"estimatedSecondsAfterPodScheduled": 7200, "estimatedSecondsAfterInitialized": 50}
    initialized = bound(3600, initialized_age=100)  # deadline now - 50 s: over
    assert existing_cpu(initialized, args=args)[0] == 0
    not_initialized = bound(3600)  # no Initialized condition: the scheduled window applies
    assert existing_cpu(not_initialized, args=args)[0] == 12 * CORES
    assert existing_cpu(bound(3600, initialized_age=10), args=args)[0] == 12 * CORES


@pytest.mark.parametrize(
    ("allow", "annotation", "args", "delta"),
    [
        (True, "7200", {}, 12 * CORES),
        (False, "7200", {}, 0),  # annotations need allowCustomizeEstimation
        (True, "-1", {"estimatedSecondsAfterPodScheduled": 7200}, 12 * CORES),  # < 0: the args
        (True, "soon", {"estimatedSecondsAfterPodScheduled": 7200}, 12 * CORES),
        (True, "0", {"estimatedSecondsAfterPodScheduled": 7200}, 0),  # 0 wins and means off
        (True, " 7200", {}, 0),  # strconv.ParseInt rejects spaces
    ],
)
def test_window_annotations(allow: bool, annotation: str, args: dict[str, Any], delta: int) -> None:
    key = "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled"
    p = bound(3600, annotations={key: annotation})
    assert existing_cpu(p, args={**args, "allowCustomizeEstimation": allow})[0] == delta


def test_initialized_annotation() -> None:
    key = "scheduling.koordinator.sh/load-estimated-seconds-after-initialized"
    p = bound(3600, initialized_age=100, annotations={key: "200"})
    assert existing_cpu(p, args={"allowCustomizeEstimation": True})[0] == 12 * CORES


# -- prod accounting ----------------------------------------------------------------------------


def test_prod_pod_reported_as_prod() -> None:
    node_delta, prod_delta, _, prod_usage = existing_cpu(
        bound(30, priority=9500), reported_priority="prod"
    )
    assert (node_delta, prod_delta, prod_usage) == (12 * CORES, 12 * CORES, 5 * CORES)


def test_prod_pod_not_reported_as_prod_counts_as_unreported_for_prod() -> None:
    node_delta, prod_delta, _, prod_usage = existing_cpu(
        bound(3600, priority=9500), reported_priority="mid"
    )
    assert (node_delta, prod_delta, prod_usage) == (0, 17 * CORES, 0)


def test_pod_reported_as_prod_but_not_prod_for_the_scheduler() -> None:
    _, prod_delta, _, prod_usage = existing_cpu(bound(30, priority=5500), reported_priority="prod")
    assert (prod_delta, prod_usage) == (0, 0)


def test_prod_usage_counts_even_without_an_estimate() -> None:
    factors = "scheduling.koordinator.sh/load-estimated-scaling-factors"
    p = bound(30, priority=9500, annotations={factors: '{"cpu":0,"memory":0}'})
    args = {"allowCustomizeEstimation": True}
    # A 0% factor on a 20-core request estimates 0: the pod has no estimate at all.
    assert existing_cpu(p, args=args, reported_priority="prod") == (0, 0, 0, 5 * CORES)


def test_prod_usage_include_sys() -> None:
    v = vector(
        {"prodUsageIncludeSys": True},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES}, system={"cpu": 3 * CORES, "memory": GI})],
        incoming=pod(),
    )
    _, _, state = state_of(v)
    assert state.cache.prod_usage[:, 0].tolist() == [3 * CORES, GI]


def test_terminal_and_reservation_pods_are_not_cached() -> None:
    reserve = {"scheduling.koordinator.sh/reserve-pod": "true"}
    assert existing_cpu(bound(30, annotations=reserve)) == (0, 0, 0, 0)
    assert existing_cpu(bound(30, phase="Succeeded")) == (0, 0, 0, 0)
    assert existing_cpu(bound(30, phase="Running"))[0] == 12 * CORES


# -- Reserve / Unreserve ---------------------------------------------------------------------------


def test_assume_and_forget_follow_the_snapshot() -> None:
    v = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES})],
        incoming=pod("new", TWENTY),
    )
    _, cycle, state = state_of(v)
    new = cycle.pod
    before = state.cache.node_delta.copy()
    cycle.snapshot.assume_pod(new, 0)
    assert state.cache.node_delta[:, 0].tolist() == [17 * CORES, DEFAULT_MEMORY]
    cycle.snapshot.assume_pod(new, 0)  # the same pod again replaces its record
    assert state.cache.node_delta[:, 0].tolist() == [17 * CORES, DEFAULT_MEMORY]
    cycle.snapshot.forget_pod(new, 0)
    assert np.array_equal(state.cache.node_delta, before)
    assert state.cache.records[0] == {}


def test_reserved_pod_with_an_old_pod_scheduled_condition_keeps_that_time() -> None:
    v = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES}, pods=[pod_usage("moved", {"cpu": 18 * CORES})])],
        incoming=pod(),
    )
    _, cycle, state = state_of(v)
    moved = parse_pod(pod_object(bound(3600) | {"name": "moved"}))
    cycle.snapshot.assume_pod(moved, 0)
    assert state.cache.node_delta[:, 0].tolist() == [0, 0]  # usage reported, window over


def test_reserve_stamps_pods_with_the_cycle_time() -> None:
    """A pod reserved at a later "now" is stamped then; with a metric updated 10 minutes
    before, it is still estimated (timestamp after updateTime - interval)."""
    v = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES}, age=0)],
        incoming=pod("new", TWENTY),
    )
    plugin, cycle, state = state_of(v)
    later = Cycle(cycle.pod, cycle.snapshot, parse_time("2026-07-24T12:10:00Z"))
    plugin.filter(later)
    cycle.snapshot.assume_pod(cycle.pod, 0)
    record = next(iter(state.cache.records[0].values()))
    assert record.timestamp_ns == 1_784_895_000 * 10**9
    assert not record.scheduled_condition


def test_a_sequence_of_placements_accumulates_through_the_engine() -> None:
    """Two nodes at 50% cpu, 65% threshold, pods estimating 8.5 cores: the first goes to a
    (ties break by name), the second to b (a is now busier), the third fits nowhere."""
    objects = cluster_objects(
        vector(
            {},
            nodes=[node("a", NODE), node("b", NODE)],
            metrics=[metric({"cpu": 50 * CORES}, node="a"), metric({"cpu": 50 * CORES}, node="b")],
        )
    )
    snapshot = snapshot_of(objects)
    engine = Engine(load_configuration(config({}, filter_plugin=True, score_plugin=True)))
    placed, messages = [], []
    for i in range(3):
        new = parse_pod(pod_object(pod(f"p{i}", {"cpu": 10 * CORES})))
        decision = engine.evaluate(new, snapshot, parse_time(NOW))
        placed.append(decision.selected_node)
        messages.append(decision.summary())
        if decision.selected_node is not None:
            engine.framework_for(new).reserve(decision)
    assert placed == ["a", "b", None]
    assert messages[2] == "0/2 nodes are available: 2 node(s) cpu usage exceed threshold."
    # Unreserve the first pod: a has room again.
    first = snapshot.pods_on_node[snapshot.index["a"]][0]
    snapshot.forget_pod(first, snapshot.index["a"])
    retry = parse_pod(pod_object(pod("p3", {"cpu": 10 * CORES})))
    assert engine.evaluate(retry, snapshot, parse_time(NOW)).selected_node == "a"


def test_state_is_built_once_per_snapshot_and_args() -> None:
    v = vector(
        {}, nodes=[node(allocatable=NODE)], metrics=[metric({"cpu": 10 * CORES})], incoming=pod()
    )
    plugin, cycle, state = state_of(v)
    assert plugin.state(Cycle(cycle.pod, cycle.snapshot, cycle.now)) is state
    other = LoadAwareScheduling(default_args({"usageThresholds": {"cpu": 50}}))
    assert other.state(cycle) is not state


# -- cluster changes (Snapshot node events) -------------------------------------------------------


def test_new_node_metric_ends_the_estimation_of_reserved_pods() -> None:
    """pod_assign_cache.go: a pod stops being estimated only when a newer NodeMetric covers it
    (updateTime - reportInterval >= timestamp) and reports its usage; timestamps are kept."""
    v = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 50 * CORES})],
        incoming=pod("new", TWENTY),
    )
    plugin, cycle, state = state_of(v)
    cycle.snapshot.assume_pod(cycle.pod, 0)
    assert state.cache.node_delta[0, 0] == 17 * CORES
    newer = node_metric(
        metric(
            {"cpu": 65 * CORES},
            age=-61,  # reported 61 s after the pod was stamped
            pods=[pod_usage("new", {"cpu": 15 * CORES})],
        )
    )
    cycle.snapshot.set_node_metric("test-node-1", newer)
    assert plugin.state(cycle) is state  # followed in place, not rebuilt
    assert state.cache.node_delta[0, 0] == 0
    assert state.metrics.node_usage[0, 0] == 65 * CORES
    # Had koordlet not reported the pod, it would still be estimated.
    cycle.snapshot.set_node_metric("test-node-1", node_metric(metric({"cpu": 65 * CORES}, age=-61)))
    assert state.cache.node_delta[0, 0] == 17 * CORES


def test_in_place_updates_match_a_fresh_build() -> None:
    v = vector(
        {"prodUsageIncludeSys": True, "prodUsageThresholds": {"cpu": 60}},
        nodes=[node("a", NODE), node("b", NODE)],
        metrics=[metric({"cpu": 10 * CORES}, node="a"), metric({"cpu": 20 * CORES}, node="b")],
        existing=[bound(30) | {"node": "a"}, bound(30) | {"node": "b", "name": "q"}],
        incoming=pod("new", TWENTY),
    )
    plugin, cycle, state = state_of(v)
    snapshot = cycle.snapshot
    snapshot.set_node_metric(
        "b",
        node_metric(
            metric(
                {"cpu": 70 * CORES},
                node="b",
                system={"cpu": CORES},
                pods=[pod_usage("q", {"cpu": CORES}, "prod")],
            )
        ),
    )
    snapshot.set_node_metric("a", None)
    annotated = node(
        "b", {"cpu": 80 * CORES, "memory": 100 * GI}, {KEY: '{"usageThresholds":{"cpu":90}}'}
    )
    snapshot.update_node(cluster_objects(vector(nodes=[annotated]))[0])
    fresh = LoadAwareState(snapshot, plugin.config, cycle.now)
    for name in ("node_delta", "prod_delta", "node_estimated", "prod_usage"):
        assert np.array_equal(getattr(state.cache, name), getattr(fresh.cache, name)), name
    assert np.array_equal(state.metrics.present, fresh.metrics.present)
    assert np.array_equal(state.allocatable, fresh.allocatable)
    assert state.thresholds.profile(1).usage == fresh.thresholds.profile(1).usage == (90, 0)
    # A batch pod is judged by node usage: b has 70 + 16 (q: estimate 17 - reported 1) cores.
    batch = parse_pod(pod_object(pod("batch", priority=5500)))
    again = Cycle(batch, snapshot, cycle.now)
    assert plugin.filter(again).status(1).message == "node(s) cpu usage exceed threshold"
    assert plugin.filter(again).status(0).ok  # no NodeMetric any more


def test_snapshot_copies_carry_independent_state() -> None:
    v = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES})],
        incoming=pod("new", TWENTY),
    )
    plugin, cycle, state = state_of(v)
    duplicate = cycle.snapshot.copy()
    duplicate.assume_pod(cycle.pod, 0)
    copied = plugin.state(Cycle(cycle.pod, duplicate, cycle.now))
    assert copied is not state
    assert copied.cache.node_delta[0, 0] == 17 * CORES
    assert state.cache.node_delta[0, 0] == 0


def test_metric_without_update_time_keeps_the_previous_one_for_estimation() -> None:
    """AddOrUpdateNodeMetric sets n.updateTime only from a non-nil updateTime: a pod settled
    under the previous metric stays settled, while a first metric without a time (Go's zero
    time) makes every pod recent."""
    settled = bound(3600)  # scheduled an hour ago, usage reported
    reported = [pod_usage("p", {"cpu": 5 * CORES})]
    v = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES}, pods=reported)],
        existing=[settled],
        incoming=pod(),
    )
    _, cycle, state = state_of(v)
    assert state.cache.node_delta[0, 0] == 0
    nil_time = node_metric(metric({"cpu": 10 * CORES}, age=None, pods=reported))
    cycle.snapshot.set_node_metric("test-node-1", nil_time)
    assert state.cache.node_delta[0, 0] == 0
    fresh = LoadAwareState(cycle.snapshot, state.cache.args, cycle.now)
    assert fresh.cache.node_delta[0, 0] == 12 * CORES
    assert not state.metrics.has_update[0] and not fresh.metrics.has_update[0]  # both expired
