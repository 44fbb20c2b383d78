"""Equal parts of many Pods held once: the replicas of one workload repeat their owner
references, affinity, labels, resources and condition times, and decoded JSON gives each Pod its
own copy of all of it. At 5,000 nodes and 40,000 Pods those copies were about a third of an
engine snapshot's memory (docs/benchmarks.md).

Each helper gives back, for a value, the first equal one it saw recently (a bounded table, so a
long-running engine does not keep every value it ever saw). The values are read-only from then
on, as everything in a snapshot is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

_decoded = lru_cache(maxsize=65536)(json.loads)


def shared(value: Any) -> Any:
    """A value equal to ``value`` as JSON (key order and number types kept), the same object for
    equal values; a value JSON cannot hold (a date read from YAML) is kept as it is."""
    if not value:
        return value
    try:
        text = _encode(value)
    except (TypeError, ValueError, RecursionError):
        return value
    return _decoded(text)


EMPTY: Mapping[str, Any] = {}  # the one empty map pods without labels, selectors... share

ConditionTriple = tuple[Any, Any, Any]  # (type, status, lastTransitionTime) as given


@lru_cache(maxsize=65536)
def _string_map(items: tuple[tuple[str, str], ...]) -> Mapping[str, str]:
    return dict(items)


def string_map(value: Mapping[Any, Any]) -> Mapping[str, str]:
    """``value`` with keys and values as strings (labels, annotations, a node selector), the
    same object for equal maps."""
    if not value:
        return EMPTY
    return _string_map(tuple((str(k), str(v)) for k, v in value.items()))


_triple = lru_cache(maxsize=65536)(lambda triple: triple)
_triples = lru_cache(maxsize=65536)(lambda triples: triples)


def condition_triples(value: Any) -> Any:
    """``status.conditions`` as shared ``(type, status, lastTransitionTime)`` triples, or as
    given when an entry is not an object of strings (whoever parses it names the field)."""
    if type(value) is not list:
        return value
    out = []
    for entry in value:
        if type(entry) is not dict:
            return value
        kind, status, stamp = (
            entry.get("type", ""),
            entry.get("status", ""),
            entry.get("lastTransitionTime"),
        )
        if (
            type(kind) is not str
            or type(status) is not str
            or not (stamp is None or type(stamp) is str)
        ):
            return value
        out.append(_triple((kind, status, stamp)))
    return _triples(tuple(out))
