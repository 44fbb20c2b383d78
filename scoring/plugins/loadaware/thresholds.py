"""Usage thresholds per node: the args, or the node annotation that replaces parts of them.

Upstream: helper.go (``NewUsageThresholdsFilterProfile``, ``generateUsageThresholdsFilterProfile``)
and apis/extension/load_aware.go (``CustomUsageThresholds``). The annotation
``scheduling.koordinator.sh/usage-thresholds`` holds JSON with ``usageThresholds``,
``prodUsageThresholds`` and ``aggregatedUsage`` (thresholds, type, duration):

- unparseable JSON: the args profile, unchanged;
- an ``aggregatedUsage`` without both thresholds and a type is dropped;
- none of the three parts present: the args profile;
- otherwise each part the annotation has **replaces** the args' part as a whole map: there is no
  per-resource merge, so ``{"usageThresholds":{"memory":60}}`` leaves cpu at 0 (unchecked). An
  annotation ``aggregatedUsage`` without a duration means 0 (the longest window).

The args profile keeps the aggregated part only when it has thresholds and a type. Thresholds are
vectors over the plugin's resources; names outside them are ignored. Nodes are grouped by their
annotation text, so each distinct annotation is parsed once per snapshot.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from scoring.durations import DurationError, parse_duration
from scoring.objects import Node
from scoring.plugins.loadaware import gojson
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.snapshot import Snapshot

ANNOTATION_USAGE_THRESHOLDS = "scheduling.koordinator.sh/usage-thresholds"
FROM_ARGS = "args"
FROM_ANNOTATION = "node annotation"

Vector = tuple[int, ...]


@dataclass(frozen=True)
class AggregatedThresholds:
    thresholds: Vector
    kind: str  # aggregation type, e.g. p95
    duration: int  # ns; 0 = longest window reported
    source: str


@dataclass(frozen=True)
class ThresholdProfile:
    """``usageThresholdsFilterProfile`` plus where each part came from."""

    usage: Vector
    usage_source: str
    prod: Vector
    prod_source: str
    aggregated: AggregatedThresholds | None
    annotation: str | None = None  # the raw annotation, when the node has one
    annotation_error: str | None = None  # why it was ignored


def to_vector(values: Mapping[str, int] | None, resources: Sequence[str]) -> Vector:
    """``ToFactorVec``: unknown names are dropped, missing ones are 0."""
    values = values or {}
    return tuple(int(values.get(name, 0)) for name in resources)


def args_profile(args: LoadAwareArgs, resources: Sequence[str]) -> ThresholdProfile:
    aggregated = None
    if args.aggregated is not None and args.aggregated.filters:
        aggregated = AggregatedThresholds(
            to_vector(args.aggregated.usage_thresholds, resources),
            args.aggregated.usage_aggregation_type,
            args.aggregated.usage_aggregated_duration,
            FROM_ARGS,
        )
    return ThresholdProfile(
        usage=to_vector(args.usage_thresholds, resources),
        usage_source=FROM_ARGS,
        prod=to_vector(args.prod_usage_thresholds, resources),
        prod_source=FROM_ARGS,
        aggregated=aggregated,
    )


@dataclass
class CustomThresholds:
    """``CustomUsageThresholds`` as Go decodes it (None = absent / nil)."""

    usage: dict[str, int] | None = None
    prod: dict[str, int] | None = None
    aggregated: dict[str, Any] | None = None


def parse_custom(text: str) -> CustomThresholds:
    """``GetCustomUsageThresholds``; raises :class:`gojson.GoJSONError` when Go's would fail."""
    custom = CustomThresholds()

    def set_usage(value: Any) -> None:
        custom.usage = gojson.int_map(value, custom.usage)

    def set_prod(value: Any) -> None:
        custom.prod = gojson.int_map(value, custom.prod)

    def set_aggregated(value: Any) -> None:
        if value is None:
            custom.aggregated = None
            return
        agg = custom.aggregated if custom.aggregated is not None else {}
        gojson.decode_struct(value, _aggregated_setters(agg))
        custom.aggregated = agg

    gojson.decode_struct(
        gojson.loads(text),
        {
            "usageThresholds": set_usage,
            "prodUsageThresholds": set_prod,
            "aggregatedUsage": set_aggregated,
        },
    )
    return custom


def _aggregated_setters(agg: dict[str, Any]) -> dict[str, Any]:
    def thresholds(value: Any) -> None:
        agg["usageThresholds"] = gojson.int_map(value, agg.get("usageThresholds"))

    def kind(value: Any) -> None:
        if value is not None:
            agg["usageAggregationType"] = gojson.string(value)

    def duration(value: Any) -> None:
        if value is None:
            agg.pop("usageAggregatedDuration", None)
            return
        try:
            agg["usageAggregatedDuration"] = parse_duration(gojson.string(value))
        except DurationError as exc:
            raise gojson.GoJSONError(str(exc)) from None

    return {
        "usageThresholds": thresholds,
        "usageAggregationType": kind,
        "usageAggregatedDuration": duration,
    }


def resolve(base: ThresholdProfile, text: str | None, resources: Sequence[str]) -> ThresholdProfile:
    """The node's profile: ``generateUsageThresholdsFilterProfile``."""
    if text is None:
        return base
    try:
        custom = parse_custom(text)
    except gojson.GoJSONError as exc:
        return replace(base, annotation=text, annotation_error=str(exc))
    agg = custom.aggregated
    if agg is not None and not (agg.get("usageThresholds") and agg.get("usageAggregationType")):
        agg = None
    if not custom.usage and not custom.prod and agg is None:
        return replace(base, annotation=text)
    aggregated = base.aggregated
    if agg is not None:
        aggregated = AggregatedThresholds(
            to_vector(agg["usageThresholds"], resources),
            str(agg["usageAggregationType"]),
            int(agg.get("usageAggregatedDuration", 0)),
            FROM_ANNOTATION,
        )
    return ThresholdProfile(
        usage=to_vector(custom.usage, resources) if custom.usage else base.usage,
        usage_source=FROM_ANNOTATION if custom.usage else base.usage_source,
        prod=to_vector(custom.prod, resources) if custom.prod else base.prod,
        prod_source=FROM_ANNOTATION if custom.prod else base.prod_source,
        aggregated=aggregated,
        annotation=text,
    )


class NodeThresholds:
    """Every node's threshold profile: ``profiles[group_ids[i]]`` is node i's; nodes with the
    same annotation text share a group."""

    def __init__(self, snapshot: Snapshot, args: LoadAwareArgs, resources: Sequence[str]) -> None:
        self.resources = tuple(resources)
        self.base = args_profile(args, resources)
        self._groups: dict[str | None, int] = {}
        self.profiles: list[ThresholdProfile] = []
        ids = [self._group(_annotation(node)) for node in snapshot.nodes]
        self.group_ids = np.array(ids, dtype=np.int32)

    def _group(self, text: str | None) -> int:
        group = self._groups.get(text)
        if group is None:
            group = self._groups[text] = len(self.profiles)
            self.profiles.append(resolve(self.base, text, self.resources))
        return group

    def update(self, node: int, snapshot: Snapshot) -> None:
        """The node object changed: its annotation may name other thresholds."""
        self.group_ids[node] = self._group(_annotation(snapshot.nodes[node]))

    def with_nodes(self, snapshot: Snapshot, nodes: Iterable[int]) -> NodeThresholds:
        """A copy with ``nodes`` read again from ``snapshot`` (a variant whose Node objects
        replace them); this one is untouched."""
        other = copy.copy(self)
        other._groups = dict(self._groups)
        other.profiles = list(self.profiles)
        other.group_ids = self.group_ids.copy()
        for node in nodes:
            other.update(node, snapshot)
        return other

    def profile(self, node: int) -> ThresholdProfile:
        return self.profiles[int(self.group_ids[node])]


def custom_usage_thresholds(
    usage: Mapping[str, int] | None = None,
    prod: Mapping[str, int] | None = None,
    aggregated: Mapping[str, int] | None = None,
    aggregation_type: str = "",
    aggregated_duration: str = "",
) -> dict[str, Any]:
    """The ``CustomUsageThresholds`` object (apis/extension/load_aware.go) for the annotation,
    with Go's ``omitempty``: an empty part is left out, and nothing set gives ``{}``."""
    value: dict[str, Any] = {}
    if usage:
        value["usageThresholds"] = dict(usage)
    if prod:
        value["prodUsageThresholds"] = dict(prod)
    block: dict[str, Any] = {}
    if aggregated:
        block["usageThresholds"] = dict(aggregated)
    if aggregation_type:
        block["usageAggregationType"] = aggregation_type
    if aggregated_duration:
        block["usageAggregatedDuration"] = aggregated_duration
    if block:
        value["aggregatedUsage"] = block
    return value


def _annotation(node: Node) -> str | None:
    return node.annotations.get(ANNOTATION_USAGE_THRESHOLDS)
