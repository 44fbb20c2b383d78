"""NodePorts (in-tree, Kubernetes 1.35 semantics).

Upstream: pkg/scheduler/framework/plugins/nodeports/node_ports.go, with the used-port bookkeeping
of ``HostPortInfo`` (pkg/scheduler/framework/types.go) and ``schedutil.GetHostPorts``.

- PreFilter: Skip when the pod asks for no host port.
- Filter: Unschedulable (preemption can free a port) when a wanted ``(hostIP, protocol, port)``
  conflicts with a port already used on the node. An empty hostIP means ``0.0.0.0`` and an empty
  protocol ``TCP``; ``0.0.0.0`` conflicts with the same protocol/port on any IP, and a specific
  IP conflicts with itself and with ``0.0.0.0``.

Used ports live in a snapshot extension (:class:`UsedPorts`) that follows Reserve/Unreserve, one
count array per ``(protocol, port, ip)`` so a conflict check is a few vector operations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from scoring.columnar.values import Table, Values
from scoring.containers import ContainerPort
from scoring.framework import (
    SKIP,
    SUCCESS,
    Cycle,
    FilterResult,
    Plugin,
    Status,
    error,
    unschedulable,
)
from scoring.objects import Pod
from scoring.snapshot import POD_EVENT, BoolArray, IntArray, Snapshot, add_columns, keep_columns

REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_KEY = "PreFilterNodePorts"
EXTENSION_KEY = "NodePorts"
_CONFLICTS_KEY = "NodePorts/conflicts"
BIND_ALL = "0.0.0.0"

HostPort = tuple[str, str, int]  # (ip, protocol, port), sanitized


def sanitize(port: ContainerPort) -> HostPort:
    """``HostPortInfo.sanitize``: empty hostIP → 0.0.0.0, empty protocol → TCP."""
    return (port.host_ip or BIND_ALL, port.protocol or "TCP", port.host_port)


def port_text(port: HostPort) -> str:
    ip, protocol, number = port
    return f"{protocol}/{ip}:{number}"


class UsedPorts:
    """Host ports used by the pods on each node, as counts per ``(protocol, port) → ip``.

    Upstream keeps a set per node, so removing one of two pods that share a port frees it; the
    counts here keep it used, which only differs for pods bound in conflict outside the scheduler.
    """

    # Reads host ports of pods, not node labels or taints: Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot) -> None:
        self._size = len(snapshot)
        self._counts: dict[tuple[str, int], dict[str, npt.NDArray[np.int32]]] = {}
        for node, pods in enumerate(snapshot.pods_on_node):
            for pod in pods:
                self.pod_added(pod, node)

    def _change(self, pod: Pod, node: int, delta: int) -> None:
        for port in pod.host_ports:
            ip, protocol, number = sanitize(port)
            if number <= 0:
                continue
            by_ip = self._counts.setdefault((protocol, number), {})
            counts = by_ip.setdefault(ip, np.zeros(self._size, dtype=np.int32))
            counts[node] += delta

    def pod_added(self, pod: Pod, node: int) -> None:
        self._change(pod, node, +1)

    def pod_removed(self, pod: Pod, node: int) -> None:
        self._change(pod, node, -1)

    def node_event(self, kind: str, node: int) -> None:
        """Ports belong to pods: Node, NodeMetric and NRT changes leave the counts valid."""

    def nodes_deleted(self, keep: BoolArray) -> None:
        self._size = int(keep.sum())
        for by_ip in self._counts.values():
            for ip, counts in by_ip.items():
                by_ip[ip] = keep_columns(counts, keep)

    def nodes_added(self, count: int) -> None:
        self._size += count
        for by_ip in self._counts.values():
            for ip, counts in by_ip.items():
                by_ip[ip] = add_columns(counts, count)

    def conflicts(self, port: HostPort) -> BoolArray:
        """``HostPortInfo.CheckConflict`` on every node."""
        ip, protocol, number = port
        result = np.zeros(self._size, dtype=bool)
        by_ip = self._counts.get((protocol, number), {})
        ips = by_ip if ip == BIND_ALL else (BIND_ALL, ip)
        for used_ip in ips:
            counts = by_ip.get(used_ip)
            if counts is not None:
                result |= counts > 0
        return result


def used_ports(snapshot: Snapshot) -> UsedPorts:
    return snapshot.extension(EXTENSION_KEY, UsedPorts)


def wanted_ports(pod: Pod) -> list[HostPort]:
    """``GetHostPorts`` of the pod, sanitized (ports ≤ 0 are never checked)."""
    return [p for p in map(sanitize, pod.host_ports) if p[2] > 0]


def _conflicting(wanted: HostPort, used: HostPort) -> bool:
    """The scalar form of ``CheckConflict`` for one used port, for explanations."""
    if wanted[1:] != used[1:]:
        return False
    return BIND_ALL in (wanted[0], used[0]) or wanted[0] == used[0]


class NodePorts(Plugin):
    """Reject nodes where a wanted host port is taken."""

    name = "NodePorts"
    points = frozenset({"preFilter", "filter"})
    depends_on = frozenset({POD_EVENT})

    def pre_filter(self, cycle: Cycle) -> Status:
        wanted = wanted_ports(cycle.pod)
        if not wanted:
            return SKIP
        cycle.state[PRE_FILTER_KEY] = wanted
        return SUCCESS

    def _conflicts(self, cycle: Cycle, wanted: list[HostPort]) -> list[tuple[HostPort, BoolArray]]:
        """Each wanted port with the nodes where it is taken (cached for explanations)."""
        conflicts: list[tuple[HostPort, BoolArray]] | None = cycle.state.get(_CONFLICTS_KEY)
        if conflicts is None:
            used = used_ports(cycle.snapshot)
            conflicts = [(port, used.conflicts(port)) for port in wanted]
            cycle.state[_CONFLICTS_KEY] = conflicts
        return conflicts

    def filter(self, cycle: Cycle) -> FilterResult:
        n = len(cycle.snapshot)
        wanted: list[HostPort] | None = cycle.state.get(PRE_FILTER_KEY)
        if wanted is None:  # PreFilter not enabled: upstream Filter errors the same way
            message = f'reading "{PRE_FILTER_KEY}" from cycleState: not found'
            return FilterResult.uniform(n, error(message))
        taken = np.zeros(n, dtype=bool)
        for _, mask in self._conflicts(cycle, wanted):
            taken |= mask
        return FilterResult.from_masks(n, [(taken, unschedulable(REASON))])

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """None everywhere for a pod wanting no host port; else node by node."""
        if not wanted_ports(cycle.pod):
            return Table.constant(None, len(nodes))
        return super().explain_columns(cycle, nodes)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        """The wanted host ports and, for each one taken here, the pods holding it."""
        wanted = wanted_ports(cycle.pod)
        if not wanted:
            return None
        conflicts = {}
        for port, mask in self._conflicts(cycle, wanted):
            if mask[node]:
                conflicts[port_text(port)] = [
                    pod.key
                    for pod in cycle.snapshot.pods_on_node[node]
                    if any(_conflicting(port, sanitize(p)) for p in pod.host_ports)
                ]
        return {"wanted": [port_text(p) for p in wanted], "conflicts": conflicts}
