"""LimitAware Filter, Score, NormalizeScore and explanations beyond the upstream vectors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoring.framework import Code, Cycle, PluginError
from scoring.objects import parse_pod
from scoring.plugins.limitaware import LimitAware
from scoring.plugins.limitaware.args import default_args
from scoring.plugins.limitaware.ratio import ANNOTATION
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    evaluate,
    make_container,
    make_node,
    make_pod,
    plugin_filter,
    plugin_score,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def bound(name: str, node: str, requests: Mapping[str, str], limits: Mapping[str, str]) -> Any:
    return make_pod(name, containers=[make_container("c", requests, limits)], node_name=node)


def kep_cluster(annotations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """KEP-217's use case: two 8-core nodes; node1 carries 10 cores of limits, node2 5."""
    return [
        make_node("node1", {"cpu": "8", "memory": "32Gi"}, annotations=annotations),
        make_node("node2", {"cpu": "8", "memory": "32Gi"}),
        bound("pod1", "node1", {"cpu": "2", "memory": "1Gi"}, {"cpu": "6", "memory": "1Gi"}),
        bound("pod2", "node1", {"cpu": "2", "memory": "1Gi"}, {"cpu": "4", "memory": "1Gi"}),
        bound("pod3", "node2", {"cpu": "3", "memory": "1Gi"}, {"cpu": "3", "memory": "1Gi"}),
        bound("pod4", "node2", {"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
    ]


POD5 = make_pod("pod5", containers=[make_container("c", {"cpu": "1"}, {"cpu": "4"})])


def run(
    objects: list[dict[str, Any]], manifest: Mapping[str, Any], args: Mapping[str, Any]
) -> tuple[LimitAware, Cycle]:
    snap = Snapshot.from_objects(objects, warn=lambda _: None)
    return LimitAware(default_args(args)), Cycle(parse_pod(manifest), snap, NOW)


def raw_scores(plugin: LimitAware, cycle: Cycle) -> list[int]:
    return plugin.score(cycle, np.arange(len(cycle.snapshot), dtype=np.int64)).tolist()


def messages(plugin: LimitAware, cycle: Cycle) -> list[str | None]:
    result = plugin.filter(cycle)
    return [result.status(i).message for i in range(len(cycle.snapshot))]


CPU_ONLY = {"scoringResourceWeights": {"cpu": 1}}


def test_kep_example_prefers_the_node_with_fewer_limits() -> None:
    plugin, cycle = run(kep_cluster(), POD5, CPU_ONLY)
    # (8 − 14)·100/8 = −75 ; (8 − 9)·100/8 = −12.5 → −12 (Go truncates toward zero)
    raw = raw_scores(plugin, cycle)
    assert raw == [-75, -12]
    assert plugin.normalize(cycle, np.array(raw)).tolist() == [0, 100]
    # Both nodes would be over-committed: Filter rejects them at the default 100 %.
    assert messages(plugin, cycle) == ["Insufficient cpu limit", "Insufficient cpu limit"]


def test_ratio_scales_the_limit_capacity() -> None:
    args = {**CPU_ONLY, "defaultLimitToAllocatableRatio": {"cpu": "200%"}}
    plugin, cycle = run(kep_cluster(), POD5, args)
    assert messages(plugin, cycle) == [None, None]
    assert raw_scores(plugin, cycle) == [(16 - 14) * 100 // 16, (16 - 9) * 100 // 16]


def test_a_node_annotation_replaces_the_default_ratio_map() -> None:
    annotations = {ANNOTATION: json.dumps({"cpu": 200})}
    plugin, cycle = run(kep_cluster(annotations), POD5, {})
    # node1: memory is not in its map, so only cpu counts: (16−14)·100/16.
    # node2: default map {cpu: 100, memory: 100}; memory (32Gi − 2Gi − 200Mi)/32Gi.
    mem = (32 * 1024 - 2 * 1024 - 200) * 100 // (32 * 1024)
    assert raw_scores(plugin, cycle) == [12, (-12 + mem) // 2]
    assert messages(plugin, cycle) == [None, "Insufficient cpu limit"]


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (
            '{"cpu": "150"}',
            "invalid value for IntOrString: invalid type: string is not a percentage",
        ),
        (
            '{"cpu": "x%"}',
            'invalid value for IntOrString: invalid value "x%": '
            'strconv.Atoi: parsing "x": invalid syntax',
        ),
        ('{"cpu": 1.5}', "json: cannot unmarshal number 1.5 into Go value of type int32"),
        ('{"cpu": true}', "json: cannot unmarshal bool into Go value of type int32"),
        (
            "[1]",
            "json: cannot unmarshal array into Go value of type extension.LimitToAllocatableRatio",
        ),
    ],
)
def test_unreadable_ratios_fail_filter_with_the_go_error(annotation: str, message: str) -> None:
    plugin, cycle = run(kep_cluster({ANNOTATION: annotation}), POD5, {})
    status = plugin.filter(cycle).status(0)
    assert (status.code, status.message) == (Code.ERROR, message)
    with pytest.raises(PluginError, match=re.escape(message)):  # the whole cycle fails
        raw_scores(plugin, cycle)
    # Without the broken node among the feasible ones, Score works.
    assert plugin.score(cycle, np.array([1], dtype=np.int64)).tolist() == [40]
    detail = plugin.explain(cycle, 0)
    assert detail is not None and detail["error"] == message


def test_a_bad_entry_for_a_resource_the_node_lacks_is_never_read() -> None:
    annotation = json.dumps({"cpu": 100, "example.com/dev": "lots"})
    plugin, cycle = run(kep_cluster({ANNOTATION: annotation}), POD5, CPU_ONLY)
    assert plugin.filter(cycle).status(0).code == Code.UNSCHEDULABLE


def test_every_short_resource_is_reported_in_upstream_order() -> None:
    node = make_node("n", {"cpu": "1", "memory": "1Gi", "example.com/b": "1", "example.com/a": "1"})
    greedy = make_pod(
        "p",
        containers=[
            make_container(
                "c", {"cpu": "2", "memory": "2Gi", "example.com/b": "2", "example.com/a": "2"}
            )
        ],
    )
    ratio = {"cpu": 100, "memory": 100, "example.com/a": 100, "example.com/b": 100}
    plugin, cycle = run([node], greedy, {"defaultLimitToAllocatableRatio": ratio})
    status = plugin.filter(cycle).status(0)
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == (
        "Insufficient cpu limit",
        "Insufficient memory limit",
        "Insufficient example.com/a limit",
        "Insufficient example.com/b limit",
    )


def test_daemonset_pods_and_pods_without_limits_always_pass() -> None:
    daemon = dict(POD5)
    daemon["metadata"] = {
        **POD5["metadata"],
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "1"}
        ],
    }
    plugin, cycle = run(kep_cluster(), daemon, CPU_ONLY)
    assert messages(plugin, cycle) == [None, None]
    empty = make_pod("e", containers=[make_container("c")])
    plugin, cycle = run(kep_cluster(), empty, CPU_ONLY)
    assert messages(plugin, cycle) == [None, None]


def test_resources_left_out_of_the_ratio_are_neither_filtered_nor_scored() -> None:
    args = {"defaultLimitToAllocatableRatio": {"memory": 100}}
    plugin, cycle = run(kep_cluster(), POD5, args)
    assert messages(plugin, cycle) == [None, None]
    mem = (32 * 1024 - 2 * 1024 - 200) * 100 // (32 * 1024)
    assert raw_scores(plugin, cycle) == [mem, mem]
    assert plugin.normalize(cycle, np.array([mem, mem])).tolist() == [0, 0]


def test_weights_and_truncation() -> None:
    args = {"scoringResourceWeights": {"cpu": 3, "memory": 1}}
    plugin, cycle = run(kep_cluster(), POD5, args)
    mem = (32 * 1024 - 2 * 1024 - 200) * 100 // (32 * 1024)
    assert raw_scores(plugin, cycle) == [int((-75 * 3 + mem) / 4), int((-12 * 3 + mem) / 4)]


def test_normalize_is_min_max_truncated() -> None:
    plugin, cycle = run(kep_cluster(), POD5, CPU_ONLY)
    got = plugin.normalize(cycle, np.array([-17, 63, 55, 10], dtype=np.int64)).tolist()
    assert got == [0, 100, int(100 * (72 / 80)), int(100 * (27 / 80))]


def test_explanation_shows_limit_to_allocatable_before_and_after() -> None:
    plugin, cycle = run(kep_cluster(), POD5, CPU_ONLY)
    detail = plugin.explain(cycle, 0)
    assert detail is not None
    cpu = detail["resources"]["cpu"]
    assert cpu["limitToAllocatable"] == {"before": 1.25, "after": 1.75}
    assert (cpu["nodeLimits"], cpu["podLimit"], cpu["limitCapacity"]) == (10000, 4000, 8000)
    assert cpu["score"] == -75
    assert detail["ratio"] == {"source": "args", "percentOfAllocatable": {"cpu": 100}}


def test_simulated_placements_move_the_totals() -> None:
    plugin, cycle = run(kep_cluster(), POD5, CPU_ONLY)
    assert raw_scores(plugin, cycle) == [-75, -12]
    cycle.snapshot.assume_pod(cycle.pod, 1)
    again = Cycle(parse_pod({**POD5, "metadata": {"name": "pod6"}}), cycle.snapshot, NOW)
    assert raw_scores(plugin, again) == [-75, -62]  # (8 − 13)·100/8 = −62.5, truncated
    cycle.snapshot.forget_pod(cycle.pod, 1)
    assert raw_scores(plugin, again) == [-75, -12]


def test_kep_example_through_the_cli(tmp_path: Path) -> None:
    star = [{"name": "*"}]
    plugins: dict[str, Any] = {p: {"disabled": star} for p in ("preFilter", "filter", "score")}
    plugins["filter"]["enabled"] = [{"name": "LimitAware"}]
    plugins["score"]["enabled"] = [{"name": "LimitAware", "weight": 2}]
    args = {**CPU_ONLY, "defaultLimitToAllocatableRatio": {"cpu": "200%"}}
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": plugins,
                "pluginConfig": [{"name": "LimitAware", "args": args}],
            }
        ],
    }
    decision = evaluate(tmp_path, kep_cluster(), POD5, config=config)
    assert decision["selectedNode"] == "node2"
    assert plugin_filter(decision, "node1", "LimitAware")["code"] == "Success"
    node2 = plugin_score(decision, "node2", "LimitAware")
    assert node2 == {
        "plugin": "LimitAware",
        "raw": 43,
        "normalized": 100,
        "weight": 2,
        "weighted": 200,
    }
    details = next(n for n in decision["nodes"] if n["name"] == "node2")["details"]["LimitAware"]
    assert details["resources"]["cpu"]["limitToAllocatable"] == {"before": 0.625, "after": 1.125}


def test_a_broken_ratio_on_a_scored_node_fails_the_cycle_through_the_cli(tmp_path: Path) -> None:
    star = [{"name": "*"}]
    plugins: dict[str, Any] = {p: {"disabled": star} for p in ("preFilter", "filter", "score")}
    plugins["score"]["enabled"] = [{"name": "LimitAware", "weight": 1}]
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    cluster = kep_cluster({ANNOTATION: '{"cpu": "150"}'})
    decision = evaluate(tmp_path, cluster, POD5, config=config)
    assert decision["selectedNode"] is None
    assert decision["error"] == (
        'running Score plugins: plugin "LimitAware" failed with: '
        "invalid value for IntOrString: invalid type: string is not a percentage"
    )
