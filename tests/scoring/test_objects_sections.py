"""Object sections: decoded JSON dicts and other mappings read alike; anything else is refused."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from scoring.objects import ObjectError, parse_node, parse_pod

POD: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}},
    "spec": {
        "nodeName": "n1",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}],
    },
    "status": {"phase": "Running"},
}


def test_mappings_read_like_dicts() -> None:
    proxied = {**POD, "metadata": MappingProxyType(POD["metadata"])}
    plain, other = parse_pod(POD), parse_pod(proxied)
    assert (other.key, other.labels, other.requests) == (plain.key, plain.labels, plain.requests)


def test_a_list_for_an_object_names_the_field() -> None:
    with pytest.raises(ObjectError, match="spec: expected an object"):
        parse_pod({**POD, "spec": []})
    node = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": ["1"]}}
    with pytest.raises(ObjectError, match=r"status\.allocatable: expected an object"):
        parse_node(node)
