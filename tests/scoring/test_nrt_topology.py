"""NodeResourceTopology ingestion: which fields, zones and attributes count, in both versions."""

from __future__ import annotations

import pytest

from scoring.object_fields import ObjectError
from scoring.plugins.nrt.topology import (
    DEFAULT_MAX_NUMA_NODES,
    LIMIT_NUMA_NODES,
    numa_id,
    parse_topology,
)
from tests.scoring.nrt_builders import GI, nrt, zone


def test_attributes_override_topology_policies_field_by_field() -> None:
    topology = parse_topology(
        nrt(
            "n",
            [],
            policies=["SingleNUMANodePodLevel"],
            attributes={"topologyManagerPolicy": "best-effort"},
        )
    )
    # The policy comes from the attribute, the scope still from the legacy field.
    assert (topology.manager.policy, topology.manager.scope) == ("best-effort", "pod")
    assert topology.manager.source == "attributes"


def test_attribute_scope_wins_over_legacy_scope() -> None:
    topology = parse_topology(
        nrt(
            "n",
            [],
            policies=["SingleNUMANodePodLevel"],
            attributes={"topologyManagerScope": "container"},
        )
    )
    assert (topology.manager.policy, topology.manager.scope) == ("single-numa-node", "container")


@pytest.mark.parametrize(
    ("policies", "expected"),
    [
        ([], ("none", "container")),
        (["SingleNUMANodeContainerLevel"], ("single-numa-node", "container")),
        (["RestrictedPodLevel"], ("restricted", "pod")),
        (["BestEffortContainerLevel"], ("best-effort", "container")),
        # Bare policies and unknown values leave the defaults.
        (["SingleNUMANode"], ("none", "container")),
        (["None"], ("none", "container")),
        # Only the first element counts.
        (["None", "SingleNUMANodePodLevel"], ("none", "container")),
    ],
)
def test_legacy_topology_policies(policies: list[str], expected: tuple[str, str]) -> None:
    manager = parse_topology(nrt("n", [], policies=policies)).manager
    assert (manager.policy, manager.scope) == expected


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"topologyManagerScope": "Pod"}, ("none", "container", 8)),  # case-sensitive
        ({"topologyManagerPolicy": "single-numa"}, ("none", "container", 8)),
        ({"topologyManagerMaxNUMANodes": "4"}, ("none", "container", 4)),
        ({"topologyManagerMaxNUMANodes": "1"}, ("none", "container", 8)),
        ({"topologyManagerMaxNUMANodes": "0"}, ("none", "container", 8)),
        ({"topologyManagerMaxNUMANodes": "-3"}, ("none", "container", 8)),
        ({"topologyManagerMaxNUMANodes": "four"}, ("none", "container", 8)),
        ({"topologyManagerMaxNUMANodes": "5000"}, ("none", "container", LIMIT_NUMA_NODES)),
    ],
)
def test_attribute_values(attributes: dict[str, str], expected: tuple[str, str, int]) -> None:
    manager = parse_topology(nrt("n", [], attributes=attributes)).manager
    assert (manager.policy, manager.scope, manager.max_numa_nodes) == expected


def test_v1alpha1_reads_topology_policies_and_ignores_top_level_attributes() -> None:
    """v1alpha1's schema has no top-level attributes: the API server prunes them."""
    obj = nrt(
        "n",
        [zone("node-0", {"cpu": 4000, "memory": GI})],
        policies=["SingleNUMANodePodLevel"],
        attributes={"topologyManagerPolicy": "none", "topologyManagerMaxNUMANodes": "2"},
        version="v1alpha1",
    )
    topology = parse_topology(obj)
    assert topology.api_version == "topology.node.k8s.io/v1alpha1"
    manager = topology.manager
    assert (manager.policy, manager.scope) == ("single-numa-node", "pod")
    assert manager.max_numa_nodes == DEFAULT_MAX_NUMA_NODES
    assert [dict(c.available) for c in topology.cells] == [{"cpu": 4000, "memory": GI}]


def test_only_node_zones_named_node_n_become_cells() -> None:
    zones = [
        zone("node-0", {"cpu": 1000}),
        zone("numa-node-1", {"cpu": 1000}),  # the README demo's name: silently dropped upstream
        zone("node-2", {"cpu": 1000}, kind="Socket"),
        zone("node-63", {"cpu": 1000}),
        zone("node-64", {"cpu": 1000}),  # upstream panics on it; dropped here
        zone("node-75", {"cpu": 1000}),
        zone("node-x", {"cpu": 1000}),
        zone("node-+5", {"cpu": 1000}),  # strconv.Atoi accepts a sign
        zone("node-007", {"cpu": 1000}),
    ]
    topology = parse_topology(nrt("n", zones))
    assert [(c.id, c.zone) for c in topology.cells] == [
        (0, "node-0"),
        (63, "node-63"),
        (5, "node-+5"),
        (7, "node-007"),
    ]
    assert topology.ignored_zones == ("numa-node-1", "node-2", "node-64", "node-75", "node-x")


@pytest.mark.parametrize(
    ("name", "expected"),
    [("node-0", 0), ("node-12", 12), ("node--0", 0), ("node- 1", None), ("node-1_0", None)],
)
def test_numa_id_follows_strconv_atoi(name: str, expected: int | None) -> None:
    assert numa_id(name) == expected


def test_only_available_is_read_and_quantities_are_parsed() -> None:
    obj = nrt("n", [zone("node-0", {"cpu": "1500m", "memory": "2Gi", "vendor/nic": "3"})])
    (cell,) = parse_topology(obj).cells
    assert dict(cell.available) == {"cpu": 1500, "memory": 2 * GI, "vendor/nic": 3}


def test_costs_keep_node_names_only_and_repeated_ids_share_the_last_costs() -> None:
    zones = [
        zone("node-0", {"cpu": 1}, costs={"node-0": 10, "node-1": 21, "socket-0": 5}),
        zone("node-1", {"cpu": 1}, costs={"node-0": 21, "node-1": 10}),
        zone("node-0", {"cpu": 2}, costs={"node-0": 11}),
    ]
    cells = parse_topology(nrt("n", zones)).cells
    assert [c.id for c in cells] == [0, 1, 0]
    assert [dict(c.costs) for c in cells] == [{0: 11}, {0: 21, 1: 10}, {0: 11}]


def test_a_bad_quantity_names_the_object_and_field() -> None:
    obj = nrt("n", [zone("node-0", {"cpu": "lots"})])
    with pytest.raises(ObjectError, match=r"NodeResourceTopology n: zones\[0\]\.resources\[0\]"):
        parse_topology(obj)
