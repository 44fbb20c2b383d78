"""NodeMetric (``slo.koordinator.sh/v1alpha1``) as numpy columns aligned with the snapshot's nodes.

What the plugin reads, and how (pod_assign_cache.go ``AddOrUpdateNodeMetric``, helper.go):

- ``status.updateTime`` (nil is possible: the metric is then always expired, and estimation
  windows compare against Go's zero time);
- ``spec.metricCollectPolicy.reportIntervalSeconds`` (default 60 s);
- ``status.nodeMetric`` (nil is "no usage": Filter passes, Score is 0): ``nodeUsage``,
  ``systemUsage`` and ``aggregatedNodeUsages[]``, whose empty resource lists are skipped and whose
  longest duration per aggregation type is also filed under duration 0;
- ``status.podsMetric[]``: each pod's usage by namespace/name (entries with an empty resource list
  are skipped), and whether koordlet reports it as ``koord-prod``.

Only the plugin's resource names are read (resource vectors ignore the rest). CPU is in
millicores, everything else ``Value()``. Times are kept as integer nanoseconds since the Unix epoch
(Python ints, so Go's zero time fits) and, for vectorized expiry checks, as int64 microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from sys import intern
from typing import Any

import numpy as np

from scoring.durations import SECOND, DurationError, parse_duration
from scoring.goint import wrap_int64
from scoring.object_fields import ObjectError
from scoring.quantity import QuantityError, resource_amount
from scoring.snapshot import BoolArray, IntArray, Snapshot, add_columns, keep_columns
from scoring.timeutil import parse_time

DEFAULT_REPORT_INTERVAL_NS = 60 * SECOND
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ZERO_TIME_NS = -62135596800 * SECOND  # Go's time.Time{} (0001-01-01T00:00:00Z)
PROD_PRIORITY = "koord-prod"

AggKey = tuple[str, int]  # (aggregation type, duration in ns); duration 0 = longest window
Vector = tuple[int, ...]

_SIMPLE = re.compile(r"^(\d{1,15})(m|k|M|G|Ki|Mi|Gi|Ti)?$")
_SCALE = {
    None: (1, 1),
    "m": (1, 1000),
    "k": (10**3, 1),
    "M": (10**6, 1),
    "G": (10**9, 1),
    "Ki": (2**10, 1),
    "Mi": (2**20, 1),
    "Gi": (2**30, 1),
    "Ti": (2**40, 1),
}


def columns(vectors: Sequence[Vector], width: int) -> IntArray:
    """Per-node vectors as a resource-major (resources × nodes) int64 array.

    Everything per node is stored this way: with only a few resources, node-major arrays make
    numpy loop over thousands of tiny rows, which costs ~30x more per operation.
    """
    if not vectors:
        return np.zeros((width, 0), dtype=np.int64)
    return np.ascontiguousarray(np.array(vectors, dtype=np.int64).reshape(-1, width).T)


def seconds_duration(seconds: int) -> int:
    """``time.Duration(seconds) * time.Second`` (wraps like Go on overflow)."""
    return wrap_int64(seconds * SECOND)


def time_ns(value: datetime) -> int:
    """Nanoseconds since the Unix epoch (exact; Python times have microsecond precision)."""
    return ((value - EPOCH) // timedelta(microseconds=1)) * 1000


@lru_cache(maxsize=65536)
def _parse_amount(name: str, raw: str) -> int:
    match = _SIMPLE.match(raw)
    if match is None:
        return resource_amount(name, raw)
    numerator, denominator = _SCALE[match.group(2)]
    exact_milli = (
        int(match.group(1)) * numerator * 1000 // denominator
    )  # exact: denominators ≤ 1000
    if exact_milli >= 2**62:
        return resource_amount(name, raw)  # let the exact parser apply Go's caps
    if name == "cpu":
        return exact_milli
    return -(-exact_milli // 1000)  # Value(): rounded up


class _Bad(Exception):
    """A malformed part of a NodeMetric: the path below the part being read, and why."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def amount(name: str, raw: Any) -> int:
    """A quantity from a NodeMetric as the scheduler's integer (cpu millicores, else Value())."""
    try:
        if type(raw) is str:
            return _parse_amount(name, raw)
        if raw is None:
            return 0  # Quantity.UnmarshalJSON("null")
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return resource_amount(name, raw)  # a JSON number, as Quantity.UnmarshalJSON reads
        raise QuantityError(f"quantities must be strings or numbers, got {raw!r}")
    except QuantityError as exc:
        raise _Bad(f".{name}", str(exc)) from None


def _mapping(value: Any, path: str = "") -> Mapping[str, Any]:
    if type(value) is dict:  # decoded JSON: skips the slow ABC check
        return value
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Bad(path, f"expected an object, got {value!r}")
    return value


def _list(value: Any, path: str = "") -> Sequence[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad(path, f"expected a list, got {value!r}")
    return value


@dataclass
class ParsedMetric:
    """One NodeMetric, reduced to what LoadAwareScheduling reads."""

    update_ns: int | None
    report_interval_ns: int
    has_info: bool
    node_usage: Vector
    system_usage: Vector
    aggregated: dict[AggKey, Vector]
    pod_usages: dict[tuple[str, str], Vector]
    prod_pods: frozenset[tuple[str, str]]
    # The assign cache's ``n.updateTime``, which estimation windows compare against. Upstream
    # assigns it only from a non-nil updateTime, so a metric without one keeps the previous
    # metric's time (Go's zero time for the first); see NodeMetrics.replace.
    estimation_update_ns: int = ZERO_TIME_NS

    def __post_init__(self) -> None:
        if self.update_ns is not None:
            self.estimation_update_ns = self.update_ns


def parse_node_metric(obj: Mapping[str, Any], resources: Sequence[str]) -> ParsedMetric:
    """Read one NodeMetric; :class:`ObjectError` names the object and the field when malformed."""
    name = (obj.get("metadata") or {}).get("name", "")
    try:
        return _Reader(tuple(resources)).parse(obj)
    except _Bad as bad:
        raise ObjectError(f"NodeMetric {name}: {bad.path.lstrip('.')}: {bad}") from None


class _Reader:
    """Parses NodeMetric objects into vectors over ``resources``; errors are :class:`_Bad`."""

    def __init__(self, resources: tuple[str, ...]) -> None:
        self.resources = resources

    def resource_list(self, value: Any) -> tuple[Vector, bool]:
        """(vector, non-empty) of a ``ResourceMap``'s ``resources``."""
        outer = value if type(value) is dict else _mapping(value)
        resources = outer.get("resources")
        if type(resources) is not dict:
            resources = _mapping(resources, ".resources")
        try:
            vector = tuple(
                [
                    amount(name, resources[name]) if name in resources else 0
                    for name in self.resources
                ]
            )
        except _Bad as bad:
            raise _Bad(".resources" + bad.path, str(bad)) from None
        return vector, len(resources) > 0

    def located(self, path: str, value: Any) -> tuple[Vector, bool]:
        try:
            return self.resource_list(value)
        except _Bad as bad:
            raise _Bad(path + bad.path, str(bad)) from None

    def parse(self, obj: Mapping[str, Any]) -> ParsedMetric:
        spec = _mapping(obj.get("spec"), "spec")
        status = _mapping(obj.get("status"), "status")
        policy = _mapping(spec.get("metricCollectPolicy"), "spec.metricCollectPolicy")
        interval = policy.get("reportIntervalSeconds")
        if isinstance(interval, float) and interval.is_integer():
            interval = int(interval)  # YAML 60.0 reaches Go as JSON 60
        if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int)):
            raise _Bad(
                "spec.metricCollectPolicy.reportIntervalSeconds",
                f"expected an integer, got {interval!r}",
            )
        update = status.get("updateTime")
        try:
            update_ns = None if update is None else time_ns(parse_time(update))
        except ValueError as exc:
            raise _Bad("status.updateTime", str(exc)) from None
        info = status.get("nodeMetric")
        zeros = (0,) * len(self.resources)
        node_usage, system_usage, aggregated = zeros, zeros, {}
        if info is not None:
            info = _mapping(info, "status.nodeMetric")
            node_usage, _ = self.located("status.nodeMetric.nodeUsage", info.get("nodeUsage"))
            system_usage, _ = self.located("status.nodeMetric.systemUsage", info.get("systemUsage"))
            aggregated = self.aggregated(info.get("aggregatedNodeUsages"))
        usages, prod = self.pods(status.get("podsMetric"))
        return ParsedMetric(
            update_ns=update_ns,
            report_interval_ns=DEFAULT_REPORT_INTERVAL_NS
            if interval is None
            else seconds_duration(interval),
            has_info=info is not None,
            node_usage=node_usage,
            system_usage=system_usage,
            aggregated=aggregated,
            pod_usages=usages,
            prod_pods=prod,
        )

    def aggregated(self, value: Any) -> dict[AggKey, Vector]:
        """Windows by (type, duration), plus (type, 0) for each type's longest non-empty window."""
        out: dict[AggKey, Vector] = {}
        longest: dict[str, int] = {}
        path = "status.nodeMetric.aggregatedNodeUsages"
        for i, entry in enumerate(_list(value, path)):
            entry = _mapping(entry, f"{path}[{i}]")
            text = entry.get("duration")
            try:
                duration = 0 if text is None else parse_duration(str(text))
            except DurationError as exc:
                raise _Bad(f"{path}[{i}].duration", str(exc)) from None
            for kind, usage in _mapping(entry.get("usage"), f"{path}[{i}].usage").items():
                vector, non_empty = self.located(f"{path}[{i}].usage.{kind}", usage)
                if not non_empty:
                    continue
                out[(str(kind), duration)] = vector
                if duration > longest.get(str(kind), 0):
                    longest[str(kind)] = duration
        for kind, duration in longest.items():
            out[(kind, 0)] = out[(kind, duration)]
        return out

    def pods(self, value: Any) -> tuple[dict[tuple[str, str], Vector], frozenset[tuple[str, str]]]:
        usages: dict[tuple[str, str], Vector] = {}
        prod: set[tuple[str, str]] = set()
        for i, entry in enumerate(_list(value, "status.podsMetric")):
            if entry is None:
                continue
            try:
                vector, non_empty = self.resource_list(_mapping(entry).get("podUsage"))
            except _Bad as bad:
                raise _Bad(f"status.podsMetric[{i}].podUsage{bad.path}", str(bad)) from None
            if not non_empty:
                continue
            # (interned, as Pods' names are: each pod's name is then held once)
            key = (intern(str(entry.get("namespace") or "")), intern(str(entry.get("name") or "")))
            usages[key] = vector
            if entry.get("priority") == PROD_PRIORITY:
                prod.add(key)
        return usages, frozenset(prod)


@dataclass
class NodeMetrics:
    """Every node's NodeMetric as arrays over nodes (usage as resources × nodes);
    ``parsed[i]`` is None where node i has none."""

    resources: tuple[str, ...]
    parsed: list[ParsedMetric | None]
    present: BoolArray
    has_update: BoolArray
    update_us: IntArray
    has_info: BoolArray
    node_usage: IntArray
    system_usage: IntArray
    _aggregated: dict[AggKey, tuple[IntArray, BoolArray]] = field(default_factory=dict)

    @classmethod
    def build(cls, snapshot: Snapshot, resources: Sequence[str]) -> NodeMetrics:
        metrics = snapshot.node_metrics
        parsed = [
            parse_node_metric(metrics[name], resources) if name in metrics else None
            for name in snapshot.node_names
        ]
        zeros = (0,) * len(resources)
        return cls(
            resources=tuple(resources),
            parsed=parsed,
            present=np.array([p is not None for p in parsed], dtype=bool),
            has_update=np.array([p is not None and p.update_ns is not None for p in parsed], bool),
            update_us=np.array(
                [p.update_ns // 1000 if p and p.update_ns is not None else 0 for p in parsed],
                dtype=np.int64,
            ),
            has_info=np.array([p is not None and p.has_info for p in parsed], dtype=bool),
            node_usage=columns([p.node_usage if p else zeros for p in parsed], len(resources)),
            system_usage=columns([p.system_usage if p else zeros for p in parsed], len(resources)),
        )

    def nodes_deleted(self, keep: BoolArray) -> None:
        self.parsed = [p for p, kept in zip(self.parsed, keep, strict=True) if kept]
        for name in ("present", "has_update", "update_us", "has_info", "node_usage"):
            setattr(self, name, keep_columns(getattr(self, name), keep))
        self.system_usage = keep_columns(self.system_usage, keep)
        self._aggregated.clear()

    def nodes_added(self, count: int) -> None:
        """Columns of nodes without a NodeMetric (then :meth:`replace` gives them theirs)."""
        self.parsed.extend([None] * count)
        for name in ("present", "has_update", "update_us", "has_info", "node_usage"):
            setattr(self, name, add_columns(getattr(self, name), count))
        self.system_usage = add_columns(self.system_usage, count)
        self._aggregated.clear()

    def replace(self, node: int, parsed: ParsedMetric | None) -> None:
        """The node's NodeMetric was replaced (or removed, with None)."""
        previous = self.parsed[node]
        if parsed is not None and parsed.update_ns is None and previous is not None:
            parsed.estimation_update_ns = previous.estimation_update_ns
        self.parsed[node] = parsed
        self.present[node] = parsed is not None
        self.has_update[node] = parsed is not None and parsed.update_ns is not None
        update = None if parsed is None else parsed.update_ns
        self.update_us[node] = 0 if update is None else update // 1000
        self.has_info[node] = parsed is not None and parsed.has_info
        zeros = (0,) * len(self.resources)
        self.node_usage[:, node] = parsed.node_usage if parsed else zeros
        self.system_usage[:, node] = parsed.system_usage if parsed else zeros
        self._aggregated.clear()

    def aggregated(self, kind: str, duration: int) -> tuple[IntArray, BoolArray]:
        """(usage, found) of one aggregation window over all nodes (``getTargetAggregatedUsage``
        before its fallbacks); built once per key."""
        key = (kind, duration)
        if key not in self._aggregated:
            zeros = (0,) * len(self.resources)
            rows = [p.aggregated.get(key) if p else None for p in self.parsed]
            usage = columns([row or zeros for row in rows], len(self.resources))
            found = np.array([row is not None for row in rows], dtype=bool)
            self._aggregated[key] = (usage, found)
        return self._aggregated[key]

    def expired(self, now_us: int, expiration_seconds: int) -> BoolArray:
        """``isNodeMetricExpired`` (helper.go): nil updateTime, or age >= expiration (inclusive).

        Age and expiration compare as Go Durations (ns); ages here are whole microseconds, so
        ``age_us * 1000 >= exp_ns`` is ``age_us >= ceil(exp_ns / 1000)``.
        """
        expired = ~self.has_update
        if expiration_seconds > 0:
            threshold_ns = seconds_duration(expiration_seconds)
            threshold_us = -(-threshold_ns // 1000)
            age_us = now_us - self.update_us
            expired = expired | (age_us >= threshold_us)
        result: BoolArray = expired
        return result
