"""Equal parts of many Pods held once: the replicas of one workload repeat their containers,
labels, owner references and tolerations, and every Pod repeats the same few strings.

Decoded JSON gives each Pod its own copy of all of it: at 5,000 nodes and 40,000 Pods those
copies are about a third of an engine snapshot's memory (docs/benchmarks.md). A
:class:`Sharer` gives back each Pod with the values of its sections (``metadata``, ``spec``,
``status``) replaced by the first equal value it saw: equal as JSON text, so key order and
types are kept, and the Pod reads the same. The objects given are not changed; the shared
values are read-only from then on, as every object in a snapshot is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class Sharer:
    """Shares the values of the Pods given to :meth:`pod` with each other. Its memory (one
    JSON text per distinct value) goes with it: make one per batch of objects."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._strings: dict[str, str] = {}

    def pod(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """``obj`` (a Pod) with its sections' values shared."""
        return {name: self._section(section) for name, section in obj.items()}

    def _section(self, section: Any) -> Any:
        if type(section) is not dict:
            return self._value(section)
        return {key: self._value(value) for key, value in section.items()}

    def _value(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return self._strings.setdefault(value, value)
        if kind is dict or kind is list:
            try:
                text = _encode(value)
            except (TypeError, ValueError, RecursionError):
                return value  # not JSON (a YAML date, say): kept as it is, not shared
            return self._values.setdefault(text, value)
        return value
