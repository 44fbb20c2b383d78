"""409 conflicts from concurrent writers are resolved by re-reading: nobody's change is lost."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from policy.gateway.apply import (
    SloTarget,
    apply_node_annotations,
    apply_slo_colocation,
    read_configmap,
)
from policy.gateway.connection import MERGE_PATCH, Connection
from policy.gateway.desired import collect_policy
from policy.gateway.errors import ConflictError
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.gateway.faultproxy import FaultProxy, matching
from tests.gateway.kubeserver import KubeServer, create, ensure_namespaces

NS = "koordinator-system"
OURS = '{"usageThresholds":{"cpu":65}}'


@pytest.fixture
def via_proxy(kube: KubeServer, proxy: FaultProxy, tmp_path: Path) -> Iterator[Connection]:
    with kube.connect(kubeconfig=kube.kubeconfig_for(proxy.url, tmp_path / "kubeconfig")) as conn:
        yield conn


@pytest.fixture
def target(admin: Connection, unique: Callable[[str], str]) -> SloTarget:
    ensure_namespaces(admin, [NS])
    target = SloTarget(namespace=NS, name=unique("slo"))
    colocation = json.dumps({"enable": True, "cpuReclaimThresholdPercent": 60})
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": target.name, "namespace": NS},
            "data": {target.key: colocation, "resource-threshold-config": "{}"},
        },
    )
    return target


def read_modify_write(admin: Connection, target: SloTarget, change: Callable[[dict], None]) -> None:
    """What another controller does: GET, change, PUT with the version it read; again on 409."""
    path = f"/api/v1/namespaces/{target.namespace}/configmaps/{target.name}"
    for _ in range(50):
        configmap = admin.request("GET", path)
        change(configmap["data"])
        try:
            admin.request("PUT", path, body=configmap)
            return
        except ConflictError:
            continue
    raise AssertionError("the other writer never got through")


def test_configmap_conflict_keeps_the_other_writers_change(
    via_proxy: Connection, proxy: FaultProxy, admin: Connection, target: SloTarget
) -> None:
    def other_writer(data: dict) -> None:
        data["other-writer"] = "was here"
        config = json.loads(data[target.key])
        data[target.key] = json.dumps({**config, "cpuReclaimThresholdPercent": 65})

    # Just before schedboard's PUT reaches the server, another writer updates the ConfigMap.
    proxy.before(
        lambda: read_modify_write(admin, target, other_writer), matching("PUT", target.name)
    )
    result = apply_slo_colocation(via_proxy, collect_policy(30), [], set(), target=target)

    assert proxy.outcomes("PUT", target.name) == ["forwarded 409", "forwarded 200"]
    [change] = result.applied
    assert json.loads(change.before or "")["cpuReclaimThresholdPercent"] == 65  # re-planned
    data = read_configmap(admin, target.namespace, target.name)["data"]  # type: ignore[index]
    assert data["other-writer"] == "was here" and data["resource-threshold-config"] == "{}"
    assert json.loads(data[target.key]) == {
        "enable": True,
        "cpuReclaimThresholdPercent": 65,
        "metricReportIntervalSeconds": 30,
    }


def test_node_conflict_keeps_the_other_writers_change(
    via_proxy: Connection,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    [node] = scratch_nodes(1)

    def other_writer() -> None:
        body = {"metadata": {"labels": {"other": "writer"}, "annotations": {"their": "note"}}}
        admin.request("PATCH", f"/api/v1/nodes/{node}", body=body, content_type=MERGE_PATCH)

    proxy.before(other_writer, matching("PATCH", node))
    result = apply_node_annotations(via_proxy, {node: OURS}, set())
    assert proxy.outcomes("PATCH", node) == ["forwarded 409", "forwarded 200"]
    assert [c.name for c in result.applied] == [node] and result.owned == {node}
    meta = admin.request("GET", f"/api/v1/nodes/{node}")["metadata"]
    assert meta["labels"]["other"] == "writer"
    assert meta["annotations"] == {"their": "note", KEY: OURS}


def test_a_conflicting_writer_who_takes_the_annotation_keeps_it(
    via_proxy: Connection,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
) -> None:
    [node] = scratch_nodes(1)
    theirs = '{"usageThresholds":{"cpu":40}}'

    def other_writer() -> None:
        body = {"metadata": {"annotations": {KEY: theirs}}}
        admin.request("PATCH", f"/api/v1/nodes/{node}", body=body, content_type=MERGE_PATCH)

    proxy.before(other_writer, matching("PATCH", node))
    result = apply_node_annotations(via_proxy, {node: OURS}, set())
    assert result.applied == [] and result.owned == frozenset()
    assert proxy.outcomes("PATCH", node) == ["forwarded 409"]
    node_meta = admin.request("GET", f"/api/v1/nodes/{node}")["metadata"]
    assert node_meta["annotations"][KEY] == theirs


def test_concurrent_writers_lose_nothing(
    kube: KubeServer, admin: Connection, target: SloTarget
) -> None:
    """schedboard pushes the collect policy over and over while two other writers add keys
    and JSON fields to the same ConfigMap: everyone's last change is there at the end."""
    rounds = 12
    errors: list[BaseException] = []

    def schedboard() -> None:
        with kube.connect() as conn:
            for i in range(rounds):
                apply_slo_colocation(conn, collect_policy(30 + i), [], set(), target=target)

    def key_writer() -> None:
        for i in range(rounds):
            read_modify_write(admin, target, lambda data, i=i: data.__setitem__(f"key-{i}", str(i)))

    def field_writer() -> None:
        def add_field(data: dict, i: int) -> None:
            config = json.loads(data[target.key])
            data[target.key] = json.dumps({**config, f"field{i}": i})

        with kube.connect() as conn:
            for i in range(rounds):
                read_modify_write(conn, target, lambda data, i=i: add_field(data, i))

    def run(work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(w,)) for w in (schedboard, key_writer, field_writer)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    data = read_configmap(admin, target.namespace, target.name)["data"]  # type: ignore[index]
    assert {f"key-{i}" for i in range(rounds)} <= set(data)
    config = json.loads(data[target.key])
    assert {f"field{i}" for i in range(rounds)} <= set(config)
    assert config["metricReportIntervalSeconds"] == 30 + rounds - 1
    assert config["enable"] is True


def test_endless_conflicts_give_up(
    via_proxy: Connection, proxy: FaultProxy, target: SloTarget
) -> None:
    proxy.fail(100, 409, matching("PUT", target.name))
    with pytest.raises(ConflictError, match="still conflicting after 8 re-reads"):
        apply_slo_colocation(via_proxy, collect_policy(30), [], set(), target=target)
    assert proxy.outcomes("PUT", target.name) == ["fail 409"] * 8
