"""Object sections: decoded JSON dicts and other mappings read alike; anything else is refused."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from scoring.object_fields import ObjectError
from scoring.objects import parse_node, parse_pod

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


@pytest.mark.parametrize(
    ("quantity", "problem"),
    [
        ("-1", "must be greater than or equal to 0"),
        ("10Ei", "is more than the scheduler can count"),
        ("1.5.5", "quantities must match the regular expression"),
        (True, "quantities must be strings or numbers"),
    ],
)
def test_a_refused_quantity_is_refused_every_time(quantity: object, problem: str) -> None:
    """Quantities are checked once per distinct string: a repeat fails as the first did."""
    container = {"name": "c", "resources": {"requests": {"cpu": quantity}}}
    pod = {**POD, "spec": {"containers": [container]}}
    for _ in range(2):
        with pytest.raises(ObjectError, match=r"spec\.containers\[0\]\.resources\.requests\.cpu"):
            try:
                parse_pod(pod)
            except ObjectError as exc:
                assert problem in str(exc)
                raise


def test_repeated_quantities_parse_alike() -> None:
    pods = [parse_pod(POD) for _ in range(2)]
    assert pods[0].requests == pods[1].requests == {"cpu": 250}
    assert parse_pod(
        {**POD, "spec": {"containers": [{"resources": {"requests": {"cpu": 1.5}}}]}}
    ).requests == {"cpu": 1500}
