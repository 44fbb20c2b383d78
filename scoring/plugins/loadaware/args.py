"""``LoadAwareSchedulingArgs``: v1 decoding, v1 defaulting and Koordinator's validation.

Upstream: pkg/scheduler/apis/config/v1/types.go (the v1 fields), v1/defaults.go
(``SetDefaults_LoadAwareSchedulingArgs``), v1/zz_generated.conversion.go (v1 → internal: a nil
``scoreAccordingProdUsage`` is false, a nil aggregated duration is 0) and
validation/validation_pluginargs.go (``ValidateLoadAwareSchedulingArgs``, run by the plugin's
``New`` on the defaulted args). Messages and field paths are upstream's, including the path
``nodeMetricExpiredSeconds`` for the field ``nodeMetricExpirationSeconds``.

Go ranges over maps in random order and each map rule reports only the first bad entry it meets;
here maps are checked in sorted key order so the reported entry is deterministic.

Decoding is strict, as kube-scheduler decodes plugin args: an unknown field is an error naming the
field (``FieldValueInvalid``, ``unknown field "x"``, the convention of :mod:`scoring.config`), and
a value of the wrong JSON type is a ``FieldValueTypeInvalid`` error.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.config.schema import json_kind
from scoring.durations import DurationError, format_duration, parse_duration
from scoring.errors import (
    INVALID,
    NOT_FOUND,
    NOT_SUPPORTED,
    TYPE_INVALID,
    ConfigurationInvalid,
    FieldError,
)
from scoring.goint import fits_int64

PLUGIN_NAME = "LoadAwareScheduling"
ARGS_KIND = "LoadAwareSchedulingArgs"
AGGREGATION_TYPES = ("avg", "p50", "p90", "p95", "p99")

DEFAULT_NODE_METRIC_EXPIRATION_SECONDS = 180
DEFAULT_RESOURCE_WEIGHTS: Mapping[str, int] = {"cpu": 1, "memory": 1}
DEFAULT_USAGE_THRESHOLDS: Mapping[str, int] = {"cpu": 65, "memory": 95}
DEFAULT_ESTIMATED_SCALING_FACTORS: Mapping[str, int] = {"cpu": 85, "memory": 70}

_TYPE_META = ("apiVersion", "kind")


# -- typed args ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AggregatedArgs:
    """``LoadAwareSchedulingAggregatedArgs`` (durations in nanoseconds, 0 when unset)."""

    usage_thresholds: Mapping[str, int] = field(default_factory=dict)
    usage_aggregation_type: str = ""
    usage_aggregated_duration: int = 0
    score_aggregation_type: str = ""
    score_aggregated_duration: int = 0

    @property
    def filters(self) -> bool:
        """The aggregated filter profile is active (``NewUsageThresholdsFilterProfile``)."""
        return bool(self.usage_thresholds) and self.usage_aggregation_type != ""


@dataclass(frozen=True)
class LoadAwareArgs:
    """The internal ``config.LoadAwareSchedulingArgs`` the plugin runs with."""

    filter_expired_node_metrics: bool | None = None
    node_metric_expiration_seconds: int | None = None
    enable_schedule_when_node_metrics_expired: bool | None = None
    resource_weights: Mapping[str, int] = field(default_factory=dict)
    dominant_resource_weight: int = 0
    usage_thresholds: Mapping[str, int] = field(default_factory=dict)
    prod_usage_thresholds: Mapping[str, int] = field(default_factory=dict)
    prod_usage_include_sys: bool = False
    score_according_prod_usage: bool = False
    estimator: str = ""
    estimated_scaling_factors: Mapping[str, int] | None = None
    estimated_seconds_after_pod_scheduled: int | None = None
    estimated_seconds_after_initialized: int | None = None
    allow_customize_estimation: bool = False
    aggregated: AggregatedArgs | None = None
    supported_resources: tuple[str, ...] = ()

    @classmethod
    def from_v1(cls, args: Mapping[str, Any]) -> LoadAwareArgs:
        """Typed args from v1 JSON; raises :class:`ConfigurationInvalid` if they do not decode."""
        decoded, errors = _decode(args, "")
        if errors:
            raise ConfigurationInvalid(errors)
        return decoded

    @property
    def resource_names(self) -> tuple[str, ...]:
        """The resource vector: ``NewResourceVectorizerFromArgs`` (helper.go), sorted names."""
        names = {"cpu", "memory"}
        names.update(self.usage_thresholds, self.prod_usage_thresholds, self.resource_weights)
        if self.aggregated is not None:
            names.update(self.aggregated.usage_thresholds)
        names.update(self.estimated_scaling_factors or {})
        names.update(self.supported_resources)
        return tuple(sorted(names))


# -- decoding -----------------------------------------------------------------------------------


class _Decoder:
    """Strict v1 decoding into :class:`LoadAwareArgs`, collecting every error."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def _type_error(self, path: str, value: Any, expected: str) -> None:
        detail = f"cannot unmarshal {json_kind(value)} into Go value of type {expected}"
        self.errors.append(FieldError(path, TYPE_INVALID, detail, value))

    def boolean(self, value: Any, path: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self._type_error(path, value, "bool")
        return None

    def int64(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # YAML 65.0 reaches Go as JSON 65
        if isinstance(value, bool) or not isinstance(value, int):
            self._type_error(path, value, "int64")
            return None
        if not fits_int64(value):
            self._type_error(path, value, "int64")
            return None
        return value

    def string(self, value: Any, path: str) -> str | None:
        if value is None or isinstance(value, str):
            return value
        self._type_error(path, value, "string")
        return None

    def int_map(self, value: Any, path: str) -> dict[str, int] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self._type_error(path, value, "map[v1.ResourceName]int64")
            return None
        out: dict[str, int] = {}
        for key, item in value.items():
            number = self.int64(item, f"{path}[{key}]")
            if number is not None or item is None:
                out[str(key)] = number or 0
        return out

    def duration(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self._type_error(path, value, "v1.Duration")
            return None
        try:
            return parse_duration(value)
        except DurationError as exc:
            self.errors.append(FieldError(path, INVALID, str(exc), value))
            return None

    def names(self, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            self._type_error(path, value, "[]v1.ResourceName")
            return ()
        out = []
        for i, item in enumerate(value):
            name = self.string(item, f"{path}[{i}]")
            if name is not None:
                out.append(name)
        return tuple(out)

    def unknown(self, obj: Mapping[str, Any], known: Mapping[str, Any], path: str) -> None:
        for key, value in obj.items():
            if key not in known:
                self.errors.append(
                    FieldError(_child(path, str(key)), INVALID, f'unknown field "{key}"', value)
                )

    def aggregated(self, value: Any, path: str) -> AggregatedArgs | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self._type_error(path, value, "LoadAwareSchedulingAggregatedArgs")
            return None
        self.unknown(value, _AGGREGATED_FIELDS, path)
        fields = {
            key: reader(self, value.get(key), _child(path, key))
            for key, reader in _AGGREGATED_FIELDS.items()
        }
        return AggregatedArgs(
            usage_thresholds=fields["usageThresholds"] or {},
            usage_aggregation_type=fields["usageAggregationType"] or "",
            usage_aggregated_duration=fields["usageAggregatedDuration"] or 0,
            score_aggregation_type=fields["scoreAggregationType"] or "",
            score_aggregated_duration=fields["scoreAggregatedDuration"] or 0,
        )


Reader = Callable[[_Decoder, Any, str], Any]

_AGGREGATED_FIELDS: dict[str, Reader] = {
    "usageThresholds": _Decoder.int_map,
    "usageAggregationType": _Decoder.string,
    "usageAggregatedDuration": _Decoder.duration,
    "scoreAggregationType": _Decoder.string,
    "scoreAggregatedDuration": _Decoder.duration,
}

_FIELDS: dict[str, Reader] = {
    "filterExpiredNodeMetrics": _Decoder.boolean,
    "nodeMetricExpirationSeconds": _Decoder.int64,
    "enableScheduleWhenNodeMetricsExpired": _Decoder.boolean,
    "resourceWeights": _Decoder.int_map,
    "dominantResourceWeight": _Decoder.int64,
    "usageThresholds": _Decoder.int_map,
    "prodUsageThresholds": _Decoder.int_map,
    "prodUsageIncludeSys": _Decoder.boolean,
    "scoreAccordingProdUsage": _Decoder.boolean,
    "estimator": _Decoder.string,
    "estimatedScalingFactors": _Decoder.int_map,
    "estimatedSecondsAfterPodScheduled": _Decoder.int64,
    "estimatedSecondsAfterInitialized": _Decoder.int64,
    "allowCustomizeEstimation": _Decoder.boolean,
    "aggregated": _Decoder.aggregated,
    "supportedResources": _Decoder.names,
}


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _decode(args: Mapping[str, Any], path: str) -> tuple[LoadAwareArgs, list[FieldError]]:
    decoder = _Decoder()
    if not isinstance(args, Mapping):
        decoder._type_error(path, args, ARGS_KIND)
        return LoadAwareArgs(), decoder.errors
    for key in _TYPE_META:
        decoder.string(args.get(key), _child(path, key))
    decoder.unknown(args, {**_FIELDS, **dict.fromkeys(_TYPE_META)}, path)
    v = {key: reader(decoder, args.get(key), _child(path, key)) for key, reader in _FIELDS.items()}
    typed = LoadAwareArgs(
        filter_expired_node_metrics=v["filterExpiredNodeMetrics"],
        node_metric_expiration_seconds=v["nodeMetricExpirationSeconds"],
        enable_schedule_when_node_metrics_expired=v["enableScheduleWhenNodeMetricsExpired"],
        resource_weights=v["resourceWeights"] or {},
        dominant_resource_weight=v["dominantResourceWeight"] or 0,
        usage_thresholds=v["usageThresholds"] or {},
        prod_usage_thresholds=v["prodUsageThresholds"] or {},
        prod_usage_include_sys=bool(v["prodUsageIncludeSys"]),
        score_according_prod_usage=bool(v["scoreAccordingProdUsage"]),
        estimator=v["estimator"] or "",
        estimated_scaling_factors=v["estimatedScalingFactors"],
        estimated_seconds_after_pod_scheduled=v["estimatedSecondsAfterPodScheduled"],
        estimated_seconds_after_initialized=v["estimatedSecondsAfterInitialized"],
        allow_customize_estimation=bool(v["allowCustomizeEstimation"]),
        aggregated=v["aggregated"],
        supported_resources=v["supportedResources"],
    )
    return typed, decoder.errors


# -- defaulting ---------------------------------------------------------------------------------


def _is_zero(value: Any) -> bool:
    return value is None or (not isinstance(value, bool) and value == 0)


def default_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """``SetDefaults_LoadAwareSchedulingArgs`` on v1 JSON; returns a new dict.

    Only well-typed fields are defaulted; malformed ones are kept for :func:`validate_args` to
    report. Resource weights default only when the map is empty AND dominantResourceWeight is 0;
    usage thresholds only when the map is empty (a non-empty map is never merged with the
    defaults); scaling factors gain cpu/memory only where those keys are missing. Durations are
    rewritten in ``Duration.String`` form, as Go marshals them.
    """
    out = {k: copy.deepcopy(v) for k, v in args.items() if v is not None}
    out.setdefault("filterExpiredNodeMetrics", True)
    out.setdefault("enableScheduleWhenNodeMetricsExpired", False)
    out.setdefault("nodeMetricExpirationSeconds", DEFAULT_NODE_METRIC_EXPIRATION_SECONDS)
    weights = out.get("resourceWeights")
    if _empty_map(weights) and _is_zero(out.get("dominantResourceWeight")):
        out["resourceWeights"] = dict(DEFAULT_RESOURCE_WEIGHTS)
    if _empty_map(out.get("usageThresholds")):
        out["usageThresholds"] = dict(DEFAULT_USAGE_THRESHOLDS)
    factors = out.get("estimatedScalingFactors")
    if factors is None:
        out["estimatedScalingFactors"] = dict(DEFAULT_ESTIMATED_SCALING_FACTORS)
    elif isinstance(factors, dict):
        for name, value in DEFAULT_ESTIMATED_SCALING_FACTORS.items():
            factors.setdefault(name, value)
    aggregated = out.get("aggregated")
    if isinstance(aggregated, dict):
        out["aggregated"] = {k: v for k, v in aggregated.items() if v is not None}
        for key in ("usageAggregatedDuration", "scoreAggregatedDuration"):
            _canonical_duration(out["aggregated"], key)
    return out


def _empty_map(value: Any) -> bool:
    return value is None or (isinstance(value, Mapping) and len(value) == 0)


def _canonical_duration(obj: dict[str, Any], key: str) -> None:
    value = obj.get(key)
    if isinstance(value, str):
        with contextlib.suppress(DurationError):  # validate_args reports it
            obj[key] = format_duration(parse_duration(value))


# -- validation ---------------------------------------------------------------------------------


def validate_args(args: Mapping[str, Any], path: str) -> list[FieldError]:
    """Every decoding error, then ``ValidateLoadAwareSchedulingArgs``'s rules in upstream order."""
    typed, errors = _decode(args, path)
    return errors + validate_typed(typed, path)


def validate_typed(a: LoadAwareArgs, path: str) -> list[FieldError]:
    """``ValidateLoadAwareSchedulingArgs`` (validation_pluginargs.go) on internal args."""
    errors: list[FieldError] = []
    seconds = a.node_metric_expiration_seconds
    if seconds is not None and seconds <= 0:
        errors.append(
            _invalid(
                _child(path, "nodeMetricExpiredSeconds"),
                seconds,
                "nodeMetricExpiredSeconds should be a positive value",
            )
        )
    _check_map(errors, path, "resourceWeights", a.resource_weights, "resource Weight", strict=True)
    if a.dominant_resource_weight < 0:
        errors.append(
            _invalid(
                _child(path, "dominantResourceWeight"),
                a.dominant_resource_weight,
                "dominantResourceWeight should not be a negative value",
            )
        )
    if a.dominant_resource_weight > 100:
        errors.append(
            _invalid(
                _child(path, "dominantResourceWeight"),
                a.dominant_resource_weight,
                "dominantResourceWeight should be less than 100",
            )
        )
    _check_map(errors, path, "usageThresholds", a.usage_thresholds, "resource Threshold")
    factors = a.estimated_scaling_factors or {}
    _check_map(
        errors,
        path,
        "estimatedScalingFactors",
        factors,
        "estimated resource ScalingFactor",
        strict=True,
    )
    missing = next((name for name in sorted(a.resource_weights) if name not in factors), None)
    if missing is not None:
        errors.append(
            FieldError(
                _child(path, "estimatedScalingFactors"),
                NOT_FOUND,
                f'Not found: "{missing}"',
                missing,
            )
        )
    if a.aggregated is not None:
        errors.extend(_validate_aggregated(a.aggregated, _child(path, "aggregated")))
    return errors


def _validate_aggregated(agg: AggregatedArgs, path: str) -> list[FieldError]:
    """``validateAggregatedArgs``."""
    errors: list[FieldError] = []
    _check_map(errors, path, "usageThresholds", agg.usage_thresholds, "resource Threshold")
    for name, value, duration_name, duration in (
        (
            "usageAggregationType",
            agg.usage_aggregation_type,
            "usageAggregatedDuration",
            agg.usage_aggregated_duration,
        ),
        (
            "scoreAggregationType",
            agg.score_aggregation_type,
            "scoreAggregatedDuration",
            agg.score_aggregated_duration,
        ),
    ):
        if value and value not in AGGREGATION_TYPES:
            supported = ", ".join(f'"{t}"' for t in AGGREGATION_TYPES)
            errors.append(
                FieldError(
                    _child(path, name), NOT_SUPPORTED, f"supported values: {supported}", value
                )
            )
        if duration < 0:
            errors.append(
                _invalid(
                    _child(path, duration_name), format_duration(duration), "duration must be >= 0"
                )
            )
    return errors


def _check_map(
    errors: list[FieldError],
    path: str,
    name: str,
    values: Mapping[str, int],
    noun: str,
    *,
    strict: bool = False,
) -> None:
    """validateResourceWeights / validateResourceThresholds / validateEstimatedScalingFactors.

    Weights and scaling factors must be in (0, 100] (``strict``), thresholds in [0, 100]; only the
    first offending entry is reported.
    """
    for resource in sorted(values):
        value = values[resource]
        if value < 0 or (strict and value == 0):
            detail = f"{noun} of {resource} should be a positive value, got {value}"
        elif value > 100:
            detail = f"{noun} of {resource} should be less than 100, got {value}"
        else:
            continue
        errors.append(_invalid(_child(path, name), dict(values), detail))
        return


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, INVALID, detail, value)
