"""NodePorts: PreFilter and Filter as kube-scheduler 1.35, and the used-port snapshot extension.

The table is TestNodePorts from pkg/scheduler/framework/plugins/nodeports/node_ports_test.go; port
specs read ``PROTOCOL/hostIP/hostPort`` as upstream's ``newPod`` helper does.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scoring.framework import Code, Cycle, Status
from scoring.objects import parse_pod
from scoring.plugins.nodeports import REASON, NodePorts, used_ports
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    evaluate,
    make_node,
    make_pod,
    only_plugin_config,
    plugin_filter,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def ports(*specs: str) -> list[dict[str, Any]]:
    out = []
    for spec in specs:
        protocol, host_ip, host_port = spec.split("/")
        out.append(
            {
                "containerPort": 80,
                "hostPort": int(host_port),
                "protocol": protocol,
                "hostIP": host_ip,
            }
        )
    return out


def port_pod(name: str, *specs: str, node: str | None = None, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "c", "image": "x", "ports": ports(*specs)}]
    return make_pod(name, containers=containers, node_name=node, spec=spec)


def cycle_for(
    pod: Mapping[str, Any], *existing: Mapping[str, Any], nodes: Sequence[str] = ("m1",)
) -> Cycle:
    objects = [make_node(n, {"cpu": 1000, "pods": 110}) for n in nodes]
    return Cycle(parse_pod(pod), Snapshot.from_objects([*objects, *existing]), NOW)


CASES = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], True),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], True),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True),
    (
        "second udp port conflict",
        ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"],
        ["UDP/127.0.0.1/8080"],
        False,
    ),
    (
        "first tcp port conflict",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        False,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        ["TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        False,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        False,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        ["TCP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001"],
        False,
    ),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], True),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ["UDP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        False,
    ),
    ("empty hostIP and protocol mean 0.0.0.0 and TCP", ["/127.0.0.1/8001"], ["TCP//8001"], False),
]


@pytest.mark.parametrize(
    ("wanted", "used", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_filter(wanted: list[str], used: list[str], fits: bool) -> None:
    cycle = cycle_for(port_pod("new", *wanted), port_pod("old", *used, node="m1"))
    plugin = NodePorts({})
    assert plugin.pre_filter(cycle).ok
    status = plugin.filter(cycle).status(0)
    assert status == (Status() if fits else Status(Code.UNSCHEDULABLE, (REASON,)))


def test_pre_filter_skips_pods_without_host_ports() -> None:
    pod = make_pod(
        "plain", containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}]
    )
    assert NodePorts({}).pre_filter(cycle_for(pod)).code == Code.SKIP


def test_filter_without_pre_filter_is_an_error() -> None:
    status = NodePorts({}).filter(cycle_for(port_pod("new", "TCP//80"))).status(0)
    assert status == Status(
        Code.ERROR, ('reading "PreFilterNodePorts" from cycleState: not found',)
    )


def test_host_ports_come_from_containers_and_sidecars_only() -> None:
    """``GetHostPorts``: init containers count only with restartPolicy Always."""
    init = [
        {"name": "setup", "image": "x", "ports": ports("TCP//81")},
        {"name": "proxy", "image": "x", "restartPolicy": "Always", "ports": ports("TCP//82")},
    ]
    old = make_pod(
        "old", init_containers=init, containers=[{"name": "c", "image": "x"}], node_name="m1"
    )
    for port, fits in (("TCP//81", True), ("TCP//82", False)):
        cycle = cycle_for(port_pod("new", port), old)
        plugin = NodePorts({})
        assert plugin.pre_filter(cycle).ok
        assert bool(plugin.filter(cycle).passed[0]) is fits


def test_host_network_makes_container_ports_host_ports() -> None:
    """API defaulting (defaultHostNetworkPorts): hostPort defaults to containerPort."""
    old = make_pod(
        "old",
        containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 9100}]}],
        node_name="m1",
        spec={"hostNetwork": True},
    )
    cycle = cycle_for(port_pod("new", "TCP//9100"), old)
    plugin = NodePorts({})
    plugin.pre_filter(cycle)
    assert not plugin.filter(cycle).passed[0]


def test_reserve_and_unreserve_keep_used_ports_in_step() -> None:
    """Simulations assume pods onto nodes; the used-port extension must follow."""
    snapshot = Snapshot.from_objects(
        [make_node("m1", {"pods": 110}), make_node("m2", {"pods": 110})]
    )
    first = parse_pod(port_pod("first", "TCP//8080"))
    plugin = NodePorts({})
    cycle = Cycle(first, snapshot, NOW)
    plugin.pre_filter(cycle)
    assert plugin.filter(cycle).passed.tolist() == [True, True]
    snapshot.assume_pod(first, 0)
    second = Cycle(parse_pod(port_pod("second", "TCP/10.1.1.1/8080")), snapshot, NOW)
    plugin.pre_filter(second)
    assert plugin.filter(second).passed.tolist() == [False, True]
    assert plugin.explain(second, 0) == {
        "wanted": ["TCP/10.1.1.1:8080"],
        "conflicts": {"TCP/10.1.1.1:8080": ["default/first"]},
    }
    snapshot.forget_pod(first, 0)
    third = Cycle(parse_pod(port_pod("third", "TCP/10.1.1.1/8080")), snapshot, NOW)
    plugin.pre_filter(third)
    assert plugin.filter(third).passed.tolist() == [True, True]


# -- vectorization --------------------------------------------------------------------------------


def reference_conflict(wanted: Sequence[str], used: Sequence[str]) -> bool:
    """``CheckConflict`` per node, from upstream's HostPortInfo rules."""

    def parts(spec: str) -> tuple[str, str, str]:
        protocol, ip, port = spec.split("/")
        return ip or "0.0.0.0", protocol or "TCP", port

    for w in map(parts, wanted):
        for u in map(parts, used):
            same = w[1:] == u[1:]
            if same and ("0.0.0.0" in (w[0], u[0]) or w[0] == u[0]):
                return True
    return False


def test_vectorized_plugin_equals_per_node_reference() -> None:
    rng = random.Random(11)
    pool = [
        f"{p}/{ip}/{port}"
        for p in ("TCP", "UDP")
        for ip in ("", "0.0.0.0", "10.0.0.1", "10.0.0.2")
        for port in (80, 443)
    ]
    names = [f"n{i}" for i in range(300)]
    used: dict[str, list[str]] = {n: [] for n in names}
    existing = []
    for i in range(400):
        node = rng.choice(names)
        specs = rng.sample(pool, rng.randint(1, 2))
        used[node].extend(specs)
        existing.append(port_pod(f"p{i}", *specs, node=node))
    snapshot = Snapshot.from_objects([*(make_node(n, {"pods": 110}) for n in names), *existing])
    plugin = NodePorts({})
    for _ in range(20):
        wanted = rng.sample(pool, rng.randint(1, 3))
        cycle = Cycle(parse_pod(port_pod("new", *wanted)), snapshot, NOW)
        plugin.pre_filter(cycle)
        assert plugin.filter(cycle).passed.tolist() == [
            not reference_conflict(wanted, used[n]) for n in names
        ]
    assert used_ports(snapshot) is used_ports(snapshot)  # built once per snapshot


# -- through the CLI ------------------------------------------------------------------------------


def test_cli_reports_port_conflicts(tmp_path: Path) -> None:
    nodes = [make_node(n, {"cpu": 4000, "memory": 8 << 30, "pods": 110}) for n in ("a", "b")]
    existing = port_pod("ingress", "TCP//443", node="a")
    decision = evaluate(
        tmp_path,
        [*nodes, existing],
        port_pod("web", "TCP/10.0.0.5/443"),
        config=only_plugin_config("NodePorts", ("preFilter", "filter")),
    )
    assert plugin_filter(decision, "a", "NodePorts") == {
        "plugin": "NodePorts",
        "code": "Unschedulable",
        "reason": "node(s) didn't have free ports for the requested pod ports",
    }
    assert plugin_filter(decision, "b", "NodePorts")["code"] == "Success"
    assert decision["selectedNode"] == "b"
