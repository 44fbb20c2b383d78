"""409 conflicts from concurrent writers are resolved by re-reading: nobody's change is lost.
A writer who changed a field the push writes stops it: nothing is written over theirs."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from policy.clusters.gateway.apply import (
    SloTarget,
    apply_configmap_key,
    apply_node_annotations,
    apply_slo_colocation,
    plan_configmap_key,
    plan_slo_colocation,
    read_configmap,
)
from policy.clusters.gateway.connection import MERGE_PATCH, Connection
from policy.clusters.gateway.desired import collect_policy
from policy.clusters.gateway.errors import ApplyError, ConcurrentEdit, ConflictError
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY
from tests.gateway.faultproxy import FaultProxy, matching
from tests.gateway.kubeserver import KubeServer, create, ensure_namespaces

NS = "koordinator-system"
OURS = '{"usageThresholds":{"cpu":65}}'
REPORT = "metricReportIntervalSeconds"


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


@pytest.mark.parametrize("ours_before", [False, True], ids=["new", "owned"])
def test_a_writer_who_changes_the_annotation_meanwhile_stops_the_push(
    via_proxy: Connection,
    proxy: FaultProxy,
    admin: Connection,
    scratch_nodes: Callable[..., list[str]],
    ours_before: bool,
) -> None:
    """Even on a node schedboard owns, a value another client wrote during the push is not
    overwritten by a change nobody confirmed: the apply stops and says so."""
    first, second = scratch_nodes(2)
    theirs = '{"usageThresholds":{"cpu":40}}'
    owned = set()
    if ours_before:
        apply_node_annotations(admin, {first: '{"usageThresholds":{"cpu":50}}'}, set())
        owned = {first}

    def other_writer() -> None:
        body = {"metadata": {"annotations": {KEY: theirs}}}
        admin.request("PATCH", f"/api/v1/nodes/{first}", body=body, content_type=MERGE_PATCH)

    proxy.before(other_writer, matching("PATCH", first))
    with pytest.raises(ApplyError) as stopped:
        apply_node_annotations(via_proxy, {first: OURS, second: OURS}, owned)
    assert isinstance(stopped.value.cause, ConcurrentEdit)
    assert f"Node/{first} metadata.annotations[{KEY}] was changed by another client" in str(
        stopped.value.cause
    )
    assert theirs in str(stopped.value.cause) and OURS in str(stopped.value.cause)
    assert proxy.outcomes("PATCH", first) == ["forwarded 409"]
    node_meta = admin.request("GET", f"/api/v1/nodes/{first}")["metadata"]
    assert node_meta["annotations"][KEY] == theirs
    assert stopped.value.applied == []


def test_a_writer_who_changes_a_collect_field_meanwhile_stops_the_push(
    via_proxy: Connection, proxy: FaultProxy, admin: Connection, target: SloTarget
) -> None:
    """The report interval is 60 when planned; another client sets 45 before schedboard's
    write lands: 25 is not written over 45."""
    read_modify_write(
        admin,
        target,
        lambda data: data.__setitem__(
            target.key, json.dumps({**json.loads(data[target.key]), REPORT: 60})
        ),
    )
    plan = plan_slo_colocation(via_proxy, collect_policy(25), [], set(), target=target)

    def other_writer(data: dict) -> None:
        config = json.loads(data[target.key])
        data[target.key] = json.dumps({**config, REPORT: 45})

    proxy.before(
        lambda: read_modify_write(admin, target, other_writer), matching("PUT", target.name)
    )
    with pytest.raises(ConcurrentEdit) as stopped:
        apply_slo_colocation(via_proxy, collect_policy(25), [], set(), target=target, plan=plan)
    message = str(stopped.value)
    assert f"data[{target.key}] {REPORT} was changed by another client" in message
    assert "planned from 60, it is now 45; schedboard did not write 25 over it" in message
    assert proxy.outcomes("PUT", target.name) == ["forwarded 409"]
    data = read_configmap(admin, target.namespace, target.name)["data"]  # type: ignore[index]
    assert json.loads(data[target.key])[REPORT] == 45


def test_the_scheduler_configuration_is_not_written_over_a_concurrent_edit(
    via_proxy: Connection, proxy: FaultProxy, admin: Connection, unique: Callable[[str], str]
) -> None:
    ensure_namespaces(admin, [NS])
    name = unique("sched")
    path = f"/api/v1/namespaces/{NS}/configmaps/{name}"
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS},
            "data": {"config.yaml": "old: 1\n", "other": "x"},
        },
    )
    plan = plan_configmap_key(via_proxy, NS, name, "config.yaml", "ours: 1\n")

    def other_writer(key: str, value: str) -> Callable[[], None]:
        def write() -> None:
            configmap = admin.request("GET", path)
            configmap["data"][key] = value
            admin.request("PUT", path, body=configmap)

        return write

    # Another key changed meanwhile: re-planned and written, their key kept.
    proxy.before(other_writer("other", "y"), matching("PUT", name))
    apply_configmap_key(via_proxy, NS, name, "config.yaml", "ours: 1\n", plan=plan)
    assert admin.request("GET", path)["data"] == {"config.yaml": "ours: 1\n", "other": "y"}

    # The key itself changed meanwhile: stopped, theirs kept.
    plan = plan_configmap_key(via_proxy, NS, name, "config.yaml", "ours: 2\n")
    proxy.before(other_writer("config.yaml", "theirs: 1\n"), matching("PUT", name))
    with pytest.raises(ConcurrentEdit, match=r"data\[config.yaml\] was changed by another"):
        apply_configmap_key(via_proxy, NS, name, "config.yaml", "ours: 2\n", plan=plan)
    assert admin.request("GET", path)["data"]["config.yaml"] == "theirs: 1\n"


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
