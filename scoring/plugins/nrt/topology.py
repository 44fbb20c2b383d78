"""NodeResourceTopology objects (v1alpha2 and v1alpha1) reduced to what the plugin reads.

What counts (upstream: pkg/noderesourcetopology/nodeconfig/topologymanager.go,
pluginhelpers.go ``createNUMANodeList``/``extractCosts``/``extractResources``, and
noderesourcetopology-api v1alpha2/helper/numanode ``NameToID``):

- The topology manager configuration starts at policy ``none``, scope ``container``,
  maxNUMANodes 8. ``topologyPolicies[0]`` (deprecated) is applied first, then the top-level
  ``attributes`` override field by field. Unknown values are ignored. v1alpha1 has no
  top-level ``attributes`` (its CRD schema prunes them), so only ``topologyPolicies`` counts.
- Only zones of type ``Node`` named ``node-<N>`` become NUMA cells; per resource only
  ``available`` is read. ``costs`` entries named ``node-<M>`` give distances.

One deliberate difference: upstream accepts ``node-64`` but then indexes a 64-entry array with
it and panics; a 64-bit NUMA bitmask cannot hold cell 64 either. Such zones are dropped here,
like every id above 64.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.goint import int64_or_none
from scoring.object_fields import ObjectError
from scoring.quantity import QuantityError, resource_amount

NONE = "none"
BEST_EFFORT = "best-effort"
RESTRICTED = "restricted"
SINGLE_NUMA_NODE = "single-numa-node"
CONTAINER_SCOPE, POD_SCOPE = "container", "pod"
DEFAULT_MAX_NUMA_NODES = 8
LIMIT_NUMA_NODES = 1024
MAX_NUMA_ID = 63  # highest id a 64-bit NUMA bitmask holds (see module docstring)
ZONE_TYPE_NUMA_NODE = "Node"

# topologyPolicies[0] → (policy, scope); other values leave the defaults unchanged.
LEGACY_POLICIES: Mapping[str, tuple[str, str]] = {
    "SingleNUMANodePodLevel": (SINGLE_NUMA_NODE, POD_SCOPE),
    "SingleNUMANodeContainerLevel": (SINGLE_NUMA_NODE, CONTAINER_SCOPE),
    "BestEffortPodLevel": (BEST_EFFORT, POD_SCOPE),
    "BestEffortContainerLevel": (BEST_EFFORT, CONTAINER_SCOPE),
    "RestrictedPodLevel": (RESTRICTED, POD_SCOPE),
    "RestrictedContainerLevel": (RESTRICTED, CONTAINER_SCOPE),
}
POLICIES = frozenset({NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE})
SCOPES = frozenset({CONTAINER_SCOPE, POD_SCOPE})

# strconv.Atoi syntax: optional sign, ASCII digits.
_ATOI = re.compile(r"[+-]?[0-9]+")


def atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi``, or None where it returns an error."""
    if not _ATOI.fullmatch(text):
        return None
    number = int(text)
    return int64_or_none(number)


def numa_id(name: str) -> int | None:
    """``numanode.NameToID`` plus the plugin's range check; None for names that are no cell."""
    if not name.startswith("node-"):
        return None
    number = atoi(name[len("node-") :])
    if number is None or number < 0 or number > MAX_NUMA_ID:
        return None
    return number


@dataclass(frozen=True)
class TopologyManager:
    """The kubelet topology manager configuration an NRT object advertises."""

    policy: str = NONE
    scope: str = CONTAINER_SCOPE
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES
    source: str = "defaults"  # where the policy came from, for explanations

    def signature(self) -> tuple[str, str, int]:
        return (self.policy, self.scope, self.max_numa_nodes)


@dataclass(frozen=True)
class NumaCell:
    """One ``Node`` zone: its NUMA id, available resources and distances to other cells."""

    id: int
    zone: str
    available: Mapping[str, int] = field(hash=False)
    costs: Mapping[int, int] = field(hash=False)

    def signature(self) -> tuple[Any, ...]:
        return (self.id, tuple(sorted(self.available.items())), tuple(sorted(self.costs.items())))


@dataclass(frozen=True)
class NodeTopology:
    """A parsed NodeResourceTopology object."""

    name: str
    api_version: str
    manager: TopologyManager
    cells: tuple[NumaCell, ...]
    ignored_zones: tuple[str, ...] = ()


def parse_topology(obj: Mapping[str, Any]) -> NodeTopology:
    """Read an NRT object; a malformed one raises :class:`ObjectError` naming the field."""
    name = str((obj.get("metadata") or {}).get("name", ""))
    api_version = str(obj.get("apiVersion", ""))
    where = f"NodeResourceTopology {name}"
    attributes = [] if api_version.endswith("/v1alpha1") else _list(obj, "attributes", where)
    manager = _manager(_list(obj, "topologyPolicies", where), attributes, where)
    cells, ignored = _cells(_list(obj, "zones", where), where)
    return NodeTopology(name, api_version, manager, cells, ignored)


def _list(obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(f"{where}: {key}: expected a list, got {value!r}")
    return value


def _manager(policies: list[Any], attributes: list[Any], where: str) -> TopologyManager:
    """``TopologyManagerFromNodeResourceTopology``: legacy policies, then attributes."""
    policy, scope, max_nodes, source = NONE, CONTAINER_SCOPE, DEFAULT_MAX_NUMA_NODES, "defaults"
    if policies and str(policies[0]) in LEGACY_POLICIES:
        policy, scope = LEGACY_POLICIES[str(policies[0])]
        source = f"topologyPolicies[0]={policies[0]}"
    for i, attribute in enumerate(attributes):
        if not isinstance(attribute, Mapping):
            raise ObjectError(f"{where}: attributes[{i}]: expected an object")
        key, value = str(attribute.get("name", "")), str(attribute.get("value", ""))
        if key == "topologyManagerScope" and value in SCOPES:
            scope = value
        elif key == "topologyManagerPolicy" and value in POLICIES:
            policy, source = value, "attributes"
        elif key == "topologyManagerMaxNUMANodes":
            number = atoi(value)
            if number is not None and number > 1:
                max_nodes = min(number, LIMIT_NUMA_NODES)
    return TopologyManager(policy, scope, max_nodes, source)


def _cells(zones: list[Any], where: str) -> tuple[tuple[NumaCell, ...], tuple[str, ...]]:
    """``createNUMANodeList``: Node-type zones named node-<N>, in zone order.

    A repeated id keeps both cells (as upstream), and both take the costs of the last zone
    with that id (upstream's id → zone index lookup).
    """
    found: list[tuple[int, str, dict[str, int]]] = []
    costs_of: dict[int, dict[int, int]] = {}
    ignored: list[str] = []
    for i, zone in enumerate(zones):
        if not isinstance(zone, Mapping):
            raise ObjectError(f"{where}: zones[{i}]: expected an object")
        zone_name = str(zone.get("name", ""))
        number = numa_id(zone_name)
        if zone.get("type") != ZONE_TYPE_NUMA_NODE or number is None:
            ignored.append(zone_name)
            continue
        found.append((number, zone_name, _available(zone, f"{where}: zones[{i}]")))
        costs_of[number] = _costs(zone, f"{where}: zones[{i}]")
    cells = tuple(NumaCell(n, z, available, costs_of[n]) for n, z, available in found)
    return cells, tuple(ignored)


def _available(zone: Mapping[str, Any], where: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for j, info in enumerate(zone.get("resources") or []):
        if not isinstance(info, Mapping):
            raise ObjectError(f"{where}.resources[{j}]: expected an object")
        name = str(info.get("name", ""))
        try:
            out[name] = resource_amount(name, info.get("available", 0))
        except QuantityError as exc:
            raise ObjectError(f"{where}.resources[{j}].available: {exc}") from None
    return out


def _costs(zone: Mapping[str, Any], where: str) -> dict[int, int]:
    """``extractCosts``: entries named node-<M> (M ≤ 64 upstream; only ≤ 63 can matter)."""
    out: dict[int, int] = {}
    for j, cost in enumerate(zone.get("costs") or []):
        if not isinstance(cost, Mapping):
            raise ObjectError(f"{where}.costs[{j}]: expected an object")
        number = numa_id(str(cost.get("name", "")))
        value = cost.get("value", 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ObjectError(f"{where}.costs[{j}].value: expected an integer, got {value!r}")
        if number is not None:
            out[number] = value
    return out


@dataclass(frozen=True)
class NodeNuma:
    """What Filter and Score see of one node: its manager config, current cells, node resources.

    ``node_resources`` are the names ``util.ResourceList(nodeInfo.Allocatable)`` lists: cpu,
    memory, pods, ephemeral-storage and the node's scalar resources (even at 0).
    """

    manager: TopologyManager
    cells: tuple[NumaCell, ...]
    node_resources: frozenset[str]

    def signature(self) -> tuple[Any, ...]:
        """Equal signatures get equal verdicts: Filter and Score run once per signature."""
        cells = tuple(cell.signature() for cell in self.cells)
        return (self.manager.signature(), cells, self.node_resources)
