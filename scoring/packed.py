"""Kubernetes objects held as compact JSON text and decoded again when read.

An engine snapshot keeps every object it was built from, because a few rare paths read more of
it than the parsed fields (a pending Pod's manifest, a Node to patch, a NodeMetric on the node
page). Decoded, 40,000 Pods and 5,000 NodeMetrics of a 5,000-node cluster are about 230 MiB of
dicts; as UTF-8 JSON they are a fifth of that. Each read decodes a fresh copy, so no reader can
change what the snapshot holds. A value JSON cannot carry (a date read from YAML) keeps the
object as it was read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

Packed = bytes | Mapping[str, Any]

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def pack(obj: Mapping[str, Any]) -> Packed:
    """``obj`` as UTF-8 JSON text, or ``obj`` itself when JSON cannot hold it."""
    try:
        return _encode(obj).encode()
    except (TypeError, ValueError, RecursionError):
        return obj


def unpack(packed: Packed) -> Mapping[str, Any]:
    """The object :func:`pack` was given (a new copy of it when it was packed)."""
    if isinstance(packed, bytes):
        decoded: Mapping[str, Any] = json.loads(packed)
        return decoded
    return packed


class PackedObjects(MutableMapping[str, Mapping[str, Any]]):
    """Objects by name (a snapshot's NodeMetrics, NRTs), each held packed."""

    def __init__(self, objects: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self._packed: dict[str, Packed] = {}
        for name, obj in (objects or {}).items():
            self[name] = obj

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        return unpack(self._packed[name])

    def __setitem__(self, name: str, obj: Mapping[str, Any]) -> None:
        self._packed[name] = pack(obj)

    def __delitem__(self, name: str) -> None:
        del self._packed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, name: object) -> bool:
        return name in self._packed
