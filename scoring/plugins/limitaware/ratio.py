"""Limit-to-allocatable ratios: how much limit a node may carry, per resource.

Upstream (koordinator-sh/koordinator@9ddd4fb2): apis/extension/limitaware.go
(``AnnotationLimitToAllocatable``, ``LimitToAllocatableRatio.GetLimitForResource``,
``GetNodeLimitToAllocatableRatio``) and pkg/scheduler/plugins/limitaware/util.go
(``getNodeLimitCapacity``). Values are ``IntOrString``: an int is a percentage, a string must
be ``"<int>%"`` (``intstr.GetScaledValueFromIntOrPercent(v, 100, false)``).

The node annotation ``node.koordinator.sh/limit-to-allocatable`` (a JSON object) *replaces*
the configured default map for that node; resources missing from the map are not limited.
Nodes are grouped by annotation text, so parsing happens once per distinct value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from scoring.config.schema import json_kind
from scoring.goint import INT32_MAX, INT32_MIN, fits_int64, quo_array
from scoring.inputs import InputLimitError, load_json
from scoring.plugins.limitaware.limits import BASE_RESOURCES
from scoring.plugins.noderesources import is_scalar_resource
from scoring.snapshot import NODE_EVENT, BoolArray, IntArray, Snapshot

ANNOTATION = "node.koordinator.sh/limit-to-allocatable"
DEFAULT_PERCENT = 100

IntOrString = int | str
_DIGITS = re.compile(r"[+-]?[0-9]+")


class RatioError(ValueError):
    """A ratio Koordinator cannot use; the message is the Go error text."""


def go_quote(text: str) -> str:
    """``%q`` for the strings that occur here (printable text)."""
    return json.dumps(text, ensure_ascii=False)


def percent(value: IntOrString) -> int:
    """``GetScaledValueFromIntOrPercent(value, 100, false)``."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise RatioError("invalid value for IntOrString: invalid type: string is not a percentage")
    digits = value[:-1]
    number = int(digits) if _DIGITS.fullmatch(digits) else None
    if number is None or not fits_int64(number):
        reason = "invalid syntax" if number is None else "value out of range"
        raise RatioError(
            f"invalid value for IntOrString: invalid value {go_quote(value)}: "
            f"strconv.Atoi: parsing {go_quote(digits)}: {reason}"
        )
    return number


def _int_or_string(value: Any) -> IntOrString:
    """``IntOrString.UnmarshalJSON`` on one decoded JSON value."""
    if isinstance(value, str):
        return value
    if value is None:
        return 0  # json.Unmarshal("null", &int32) leaves 0
    kind = json_kind(value)
    if kind == "number" and isinstance(value, int) and INT32_MIN <= value <= INT32_MAX:
        return value
    shown = f"number {value}" if kind == "number" else kind
    raise RatioError(f"json: cannot unmarshal {shown} into Go value of type int32")


def parse_ratio(raw: Mapping[str, Any]) -> dict[str, IntOrString]:
    return {str(name): _int_or_string(value) for name, value in raw.items()}


def parse_annotation(text: str) -> dict[str, IntOrString]:
    """``json.Unmarshal`` into ``LimitToAllocatableRatio``.

    Syntax errors carry Python's JSON message, not Go's (wording differs; the code is the same).
    """
    try:
        data = load_json(text, source=ANNOTATION)
    except (json.JSONDecodeError, InputLimitError) as exc:
        raise RatioError(f"invalid JSON in {ANNOTATION}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = "string" if isinstance(data, str) else json_kind(data)
        raise RatioError(
            f"json: cannot unmarshal {kind} into Go value of type extension.LimitToAllocatableRatio"
        )
    return parse_ratio(data)


@dataclass(frozen=True)
class Ratio:
    """One distinct ratio map (the default or an annotation), or why it cannot be read."""

    values: Mapping[str, IntOrString]
    source: str  # "args" or "annotation"
    error: str | None = None

    def percent_of(self, name: str) -> tuple[int, str | None]:
        """``GetLimitForResource``'s percentage: 100 when unlisted; an error text if unusable."""
        if name not in self.values:
            return DEFAULT_PERCENT, None
        try:
            return percent(self.values[name]), None
        except RatioError as exc:
            return DEFAULT_PERCENT, str(exc)


class NodeRatios:
    """The ratio of every node, its capacity arrays, and per-node errors (a snapshot extension)."""

    # Reads allocatable and annotations, not node labels or taints: Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot, default: Mapping[str, Any]) -> None:
        self.snapshot = snapshot
        self._default = default
        self._stale = False
        self._build()

    def node_event(self, kind: str, node: int) -> None:
        """A Node changed (annotations, allocatable): rebuilt on next use (:meth:`current`), once
        however many nodes a refresh changed."""
        if kind == NODE_EVENT:
            self._stale = True

    def current(self) -> NodeRatios:
        """This state, rebuilt first if a Node changed since it was built."""
        if self._stale:
            self._stale = False
            self._build()
        return self

    def _build(self) -> None:
        snapshot = self.snapshot
        self.ratios: list[Ratio] = [_default_ratio(self._default)]
        by_text: dict[str, int] = {}
        ids = np.zeros(len(snapshot), dtype=np.int32)
        for node, obj in enumerate(snapshot.nodes):
            text = obj.annotations.get(ANNOTATION)
            if text is None:
                continue
            if text not in by_text:
                by_text[text] = len(self.ratios)
                self.ratios.append(_annotation_ratio(text))
            ids[node] = by_text[text]
        self.ids = ids
        self.errors = self._node_errors()
        messages = sorted({e for e in self.errors if e is not None})
        index = {message: k for k, message in enumerate(messages)}
        self.error_messages = messages
        self.error_ids = np.array(
            [-1 if e is None else index[e] for e in self.errors], dtype=np.int32
        )
        self.error_mask: npt.NDArray[np.bool_] = self.error_ids >= 0
        self._columns: dict[str, tuple[BoolArray, IntArray]] = {}

    def capacity(self, name: str) -> tuple[BoolArray, IntArray]:
        """(resource listed in the node's ratio, limit capacity = allocatable × percent / 100)."""
        if name not in self._columns:
            listed = np.array([name in r.values for r in self.ratios], dtype=bool)
            percents = np.array([r.percent_of(name)[0] for r in self.ratios], dtype=np.int64)
            column = self.snapshot.resource_index.get(name)
            known = name in BASE_RESOURCES or is_scalar_resource(name)
            if column is None or not known:
                allocatable = np.zeros(len(self.snapshot), dtype=np.int64)
            else:
                allocatable = self.snapshot.allocatable[:, column]
            capacity = quo_array(percents[self.ids] * allocatable, 100)
            self._columns[name] = (listed[self.ids], capacity)
        return self._columns[name]

    def _node_errors(self) -> list[str | None]:
        """``getNodeLimitCapacity`` fails on the first unusable entry among cpu, memory,
        ephemeral-storage and the node's scalar resources (in name order here)."""
        errors: list[str | None] = [None] * len(self.snapshot)
        troubled = {k for k, r in enumerate(self.ratios) if r.error or _bad_entries(r)}
        for node in np.flatnonzero(np.isin(self.ids, list(troubled))):
            ratio = self.ratios[self.ids[node]]
            errors[node] = ratio.error or _first_error(ratio, self._checked(int(node)))
        return errors

    def _checked(self, node: int) -> Iterable[str]:
        scalars = sorted(n for n in self.snapshot.nodes[node].allocatable if is_scalar_resource(n))
        return (*BASE_RESOURCES, *scalars)

    def ratio_of(self, node: int) -> Ratio:
        return self.ratios[int(self.ids[node])]


def _default_ratio(default: Mapping[str, Any]) -> Ratio:
    try:
        return Ratio(parse_ratio(default), "args")
    except RatioError as exc:  # unreachable after args validation; kept for direct use
        return Ratio({}, "args", str(exc))


def _annotation_ratio(text: str) -> Ratio:
    try:
        return Ratio(parse_annotation(text), "annotation")
    except RatioError as exc:
        return Ratio({}, "annotation", str(exc))


def _bad_entries(ratio: Ratio) -> bool:
    return any(ratio.percent_of(name)[1] for name in ratio.values)


def _first_error(ratio: Ratio, names: Iterable[str]) -> str | None:
    for name in names:
        problem = ratio.percent_of(name)[1]
        if problem:
            return problem
    return None
