"""NodeMetric collect policies merged into Koordinator's slo-controller-config."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from policy.clusters.gateway.apply import (
    SloTarget,
    apply_slo_colocation,
    plan_slo_colocation,
    read_configmap,
)
from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.desired import collect_policy
from policy.clusters.gateway.errors import PermanentError
from tests.gateway.kubeserver import create, ensure_namespaces

NS = "koordinator-system"
COLOCATION = {
    "enable": True,
    "cpuReclaimThresholdPercent": 60,
    "nodeConfigs": [
        {
            "name": "gpu-pool",
            "nodeSelector": {"matchLabels": {"pool": "gpu"}},
            "cpuReclaimThresholdPercent": 50,
        }
    ],
}
OTHER_KEYS = {
    "resource-threshold-config": '{"clusterStrategy": {"enable": false}}',
    "cpu-burst-config": '{"clusterStrategy": {"policy": "auto"}}',
}
# A nodeConfigs entry as a collect policy renders it (policy.policies.rendering).
GENERAL = {
    "name": "sb-general",
    "nodeSelector": {"matchLabels": {"pool": "general"}},
    "metricReportIntervalSeconds": 15,
}


@pytest.fixture
def target(admin: Connection, unique: Callable[[str], str]) -> SloTarget:
    ensure_namespaces(admin, [NS])
    return SloTarget(namespace=NS, name=unique("slo-controller-config"))


def seed_configmap(admin: Connection, target: SloTarget, colocation: str) -> None:
    data = {**OTHER_KEYS, target.key: colocation}
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": target.name, "namespace": target.namespace},
            "data": data,
        },
    )


def data(admin: Connection, target: SloTarget) -> dict[str, str]:
    configmap = read_configmap(admin, target.namespace, target.name)
    assert configmap is not None
    return dict(configmap["data"])


def test_merges_without_clobbering_other_keys_or_fields(
    admin: Connection, target: SloTarget
) -> None:
    seed_configmap(admin, target, json.dumps(COLOCATION, indent=4))
    policy = collect_policy(report_interval_seconds=30, aggregate_duration_seconds=600)

    plan = plan_slo_colocation(admin, policy, [GENERAL], set(), target=target)
    [change] = plan.changes
    assert change.field == "data[colocation-config]" and change.action == "update"
    assert '+  "metricReportIntervalSeconds": 30,' in change.diff
    assert plan.owned == {"sb-general"} and plan.notes == []

    result = apply_slo_colocation(admin, policy, [GENERAL], set(), target=target, plan=plan)
    assert result.applied == plan.changes and result.owned == {"sb-general"}
    after = data(admin, target)
    assert {k: after[k] for k in OTHER_KEYS} == OTHER_KEYS  # byte for byte
    assert json.loads(after[target.key]) == {
        **COLOCATION,
        "metricReportIntervalSeconds": 30,
        "metricAggregateDurationSeconds": 600,
        "nodeConfigs": [COLOCATION["nodeConfigs"][0], GENERAL],
    }
    assert not plan_slo_colocation(admin, policy, [GENERAL], result.owned, target=target)


def test_removes_only_what_it_owns(admin: Connection, target: SloTarget) -> None:
    seed_configmap(admin, target, json.dumps(COLOCATION))
    first = apply_slo_colocation(admin, collect_policy(30), [GENERAL], set(), target=target)
    assert first.owned is not None

    result = apply_slo_colocation(admin, collect_policy(), [], first.owned, target=target)
    assert result.owned == frozenset()
    assert json.loads(data(admin, target)[target.key]) == COLOCATION


def test_leaves_a_foreign_node_config_alone(admin: Connection, target: SloTarget) -> None:
    seed_configmap(admin, target, json.dumps(COLOCATION))
    theirs = {
        "name": "gpu-pool",
        "nodeSelector": {"matchLabels": {"pool": "gpu"}},
        "metricReportIntervalSeconds": 5,
    }
    plan = plan_slo_colocation(admin, {}, [theirs], set(), target=target)
    assert plan.changes == [] and plan.owned == frozenset()
    assert "'gpu-pool' was written by someone else" in plan.notes[0]


def test_creates_the_configmap_and_warns_about_enable(admin: Connection, target: SloTarget) -> None:
    plan = plan_slo_colocation(admin, collect_policy(30), [], set(), target=target)
    [change] = plan.changes
    assert change.action == "add" and change.resource_version is None
    assert any('"enable": true' in note for note in plan.notes)
    apply_slo_colocation(admin, collect_policy(30), [], set(), target=target, plan=plan)
    assert json.loads(data(admin, target)[target.key]) == {"metricReportIntervalSeconds": 30}


def test_unreadable_json_is_not_overwritten(admin: Connection, target: SloTarget) -> None:
    seed_configmap(admin, target, "{ this is not json")
    with pytest.raises(PermanentError, match="not valid JSON"):
        apply_slo_colocation(admin, collect_policy(30), [], set(), target=target)
    assert data(admin, target)[target.key] == "{ this is not json"
