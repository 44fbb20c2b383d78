"""``LowNodeLoadArgs`` (descheduler/v1alpha2): strict decoding, defaulting, pools, validation.

Upstream (koordinator-sh/koordinator):

- pkg/descheduler/apis/config/v1alpha2/types_loadaware.go: the fields; percentages are float64.
- v1alpha2/defaults.go ``SetDefaults_LowNodeLoadArgs``: ``nodeFit`` true, anomaly condition
  ``{1m, 5, 3}`` when nil (an *else-if*: with both counts 0 only the abnormal count is set),
  ``detectorCacheTimeout`` 5m, ``nodeMetricExpirationSeconds`` 180, resource weights 1 for cpu,
  memory and every low/high key (weights ≤ 0 reset to the default), then
  ``SetDefaults_LowNodeLoadNodePools``: a pool's nil maps, weights and anomaly condition inherit
  the top-level value, a zero count inherits the top-level count (``useDeviationThresholds`` does
  not inherit).
- v1alpha2/conversion_plugins.go: the top-level selector, deviation flag, maps, weights and
  anomaly condition become the pool ``__default_node_pool__``, *prepended* to ``nodePools``.
- validation/validation_loadaware.go ``ValidateLowLoadUtilizationArgs``, run by the plugin's
  ``New`` (so only when LowNodeLoad is enabled). Maps are checked in sorted key order here (Go's
  order is random). Paths and messages are upstream's, including ``nodeMetricExpiredSeconds``
  and ``anomalyDetectionThresholds``.

Decoding is strict (the descheduler's scheme codecs are built with ``EnableStrict``): an unknown
field is an error naming it.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring import field_errors as fe
from scoring.durations import MINUTE, DurationError, parse_duration
from scoring.errors import TYPE_INVALID, ConfigurationInvalid, FieldError
from scoring.selectors import SelectorError, parse_label_selector

PLUGIN_NAME = "LowNodeLoad"
ARGS_KIND = "LowNodeLoadArgs"
DEFAULT_POOL = "__default_node_pool__"

DEFAULT_NODE_METRIC_EXPIRATION_SECONDS = 180
DEFAULT_DETECTOR_CACHE_TIMEOUT = 5 * MINUTE
DEFAULT_ANOMALY_TIMEOUT = 1 * MINUTE
DEFAULT_CONSECUTIVE_ABNORMALITIES = 5
DEFAULT_CONSECUTIVE_NORMALITIES = 3

# What koord-descheduler applies to an unset scalar field of LowNodeLoadArgs, as a person
# writes it (the defaults above, and Go's zero values): editors show them beside empty fields.
# anomalyCondition's three apply together, while anomalyCondition is absent: once it is
# written, an unset timeout is 0 and an unset count follows the else-if above.
SCALAR_DEFAULTS: Mapping[str, str] = {
    "paused": "false",
    "dryRun": "false",
    "nodeFit": "true",
    "useDeviationThresholds": "false",
    "numberOfNodes": "0",
    "nodeMetricExpirationSeconds": str(DEFAULT_NODE_METRIC_EXPIRATION_SECONDS),
    "anomalyCondition.consecutiveAbnormalities": str(DEFAULT_CONSECUTIVE_ABNORMALITIES),
    "anomalyCondition.consecutiveNormalities": str(DEFAULT_CONSECUTIVE_NORMALITIES),
    "anomalyCondition.timeout": f"{DEFAULT_ANOMALY_TIMEOUT // MINUTE}m",
    "detectorCacheTimeout": f"{DEFAULT_DETECTOR_CACHE_TIMEOUT // MINUTE}m",
}

Thresholds = dict[str, float]


@dataclass(frozen=True)
class AnomalyCondition:
    """``LoadAnomalyCondition`` (timeout in nanoseconds)."""

    timeout: int = DEFAULT_ANOMALY_TIMEOUT
    consecutive_abnormalities: int = DEFAULT_CONSECUTIVE_ABNORMALITIES
    consecutive_normalities: int = DEFAULT_CONSECUTIVE_NORMALITIES


@dataclass(frozen=True)
class NodePool:
    """``LowNodeLoadNodePool`` after defaulting and conversion; ``None`` maps are nil."""

    name: str
    node_selector: Mapping[str, Any] | None
    use_deviation_thresholds: bool
    low: Thresholds | None
    high: Thresholds | None
    prod_low: Thresholds | None
    prod_high: Thresholds | None
    resource_weights: Mapping[str, int]
    anomaly: AnomalyCondition


@dataclass(frozen=True)
class LowNodeLoadArgs:
    """The internal ``config.LowNodeLoadArgs`` the plugin runs with (pools converted)."""

    paused: bool = False
    dry_run: bool = False
    number_of_nodes: int = 0
    node_metric_expiration_seconds: int = DEFAULT_NODE_METRIC_EXPIRATION_SECONDS
    evictable_include: tuple[str, ...] = ()
    evictable_exclude: tuple[str, ...] = ()
    pod_selectors: tuple[tuple[str, Mapping[str, Any] | None], ...] = ()
    node_fit: bool = True
    detector_cache_timeout: int = DEFAULT_DETECTOR_CACHE_TIMEOUT
    node_pools: tuple[NodePool, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


# -- decoding -----------------------------------------------------------------------------------


class _Decoder:
    """Typed reads of a JSON object that collect located errors instead of raising."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def type_error(self, path: str, value: Any, expected: str) -> None:
        self.errors.append(FieldError(path, TYPE_INVALID, f"expected {expected}", value))

    def object(self, value: Any, path: str, known: tuple[str, ...]) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.type_error(path, value, "an object")
            return {}
        for name in value:
            if name not in known:
                self.errors.append(
                    fe.invalid(fe.child(path, str(name)), value[name], f'unknown field "{name}"')
                )
        return value

    def boolean(self, value: Any, path: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.type_error(path, value, "a boolean")
        return None

    def integer(self, value: Any, path: str) -> int | None:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        self.type_error(path, value, "an integer")
        return None

    def bounded(self, value: Any, path: str, bits: int) -> int | None:
        """A Go intN: a value outside its range fails to decode."""
        number = self.integer(value, path)
        if number is not None and not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
            self.type_error(path, number, f"an int{bits}")
            return None
        return number

    def duration(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.type_error(path, value, "a duration string")
            return None
        try:
            return parse_duration(value)
        except DurationError as exc:
            self.errors.append(fe.invalid(path, value, str(exc)))
            return None

    def thresholds(self, value: Any, path: str) -> Thresholds | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.type_error(path, value, "an object of percentages")
            return None
        out: Thresholds = {}
        for name, pct in value.items():
            if isinstance(pct, bool) or not isinstance(pct, int | float) or not math.isfinite(pct):
                self.type_error(fe.key(path, str(name)), pct, "a number")
                continue
            out[str(name)] = float(pct)
        return out

    def weights(self, value: Any, path: str) -> dict[str, int] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.type_error(path, value, "an object of integers")
            return None
        out: dict[str, int] = {}
        for name, weight in value.items():
            number = self.integer(weight, fe.key(path, str(name)))
            if number is not None:
                out[str(name)] = number
        return out

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.type_error(path, value, "a list of strings")
            return ()
        return tuple(value)

    def selector(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.type_error(path, value, "a label selector object")
            return None
        return value


_ARGS_FIELDS = (
    "apiVersion",
    "kind",
    "paused",
    "dryRun",
    "numberOfNodes",
    "nodeMetricExpirationSeconds",
    "evictableNamespaces",
    "nodeSelector",
    "podSelectors",
    "nodeFit",
    "useDeviationThresholds",
    "highThresholds",
    "lowThresholds",
    "prodHighThresholds",
    "prodLowThresholds",
    "resourceWeights",
    "anomalyCondition",
    "detectorCacheTimeout",
    "nodePools",
)
_POOL_FIELDS = (
    "name",
    "nodeSelector",
    "useDeviationThresholds",
    "highThresholds",
    "lowThresholds",
    "prodHighThresholds",
    "prodLowThresholds",
    "resourceWeights",
    "anomalyCondition",
)
_ANOMALY_FIELDS = ("timeout", "consecutiveAbnormalities", "consecutiveNormalities")


@dataclass
class _RawAnomaly:
    timeout: int | None
    abnormal: int
    normal: int


def _anomaly(dec: _Decoder, value: Any, path: str) -> _RawAnomaly | None:
    if value is None:
        return None
    obj = dec.object(value, path, _ANOMALY_FIELDS)
    abnormal = dec.integer(
        obj.get("consecutiveAbnormalities"), fe.child(path, "consecutiveAbnormalities")
    )
    normal = dec.integer(
        obj.get("consecutiveNormalities"), fe.child(path, "consecutiveNormalities")
    )
    for name, count in (("consecutiveAbnormalities", abnormal), ("consecutiveNormalities", normal)):
        if count is not None and not 0 <= count < 2**32:
            dec.type_error(fe.child(path, name), count, "an unsigned 32-bit integer")
    return _RawAnomaly(
        dec.duration(obj.get("timeout"), fe.child(path, "timeout")), abnormal or 0, normal or 0
    )


def _default_top_anomaly(raw: _RawAnomaly | None) -> AnomalyCondition:
    """``SetDefaults_LowNodeLoadArgs``' else-if on the top-level condition."""
    if raw is None:
        return AnomalyCondition()
    abnormal, normal = raw.abnormal, raw.normal
    if abnormal == 0:
        abnormal = DEFAULT_CONSECUTIVE_ABNORMALITIES
    elif normal == 0:
        normal = DEFAULT_CONSECUTIVE_NORMALITIES
    return AnomalyCondition(raw.timeout or 0, abnormal, normal)


def _pool_anomaly(raw: _RawAnomaly | None, top: AnomalyCondition) -> AnomalyCondition:
    if raw is None:
        return top
    return AnomalyCondition(
        raw.timeout or 0,
        raw.abnormal or top.consecutive_abnormalities,
        raw.normal or top.consecutive_normalities,
    )


def _default_weights(
    weights: dict[str, int] | None, low: Thresholds | None, high: Thresholds | None
) -> dict[str, int]:
    defaults = {
        "cpu": 1,
        "memory": 1,
        **dict.fromkeys(low or {}, 1),
        **dict.fromkeys(high or {}, 1),
    }
    if weights is None:
        return defaults
    out = dict(weights)
    for name, weight in defaults.items():
        if out.get(name, 0) <= 0:
            out[name] = weight
    return out


def decode_args(raw: Mapping[str, Any] | None, path: str = "") -> LowNodeLoadArgs:
    """Decode, default and convert; :class:`ConfigurationInvalid` lists every decoding error."""
    dec = _Decoder()
    obj = dec.object(raw, path, _ARGS_FIELDS)
    at: Callable[[str], str] = lambda name: fe.child(path, name)  # noqa: E731
    low = dec.thresholds(obj.get("lowThresholds"), at("lowThresholds"))
    high = dec.thresholds(obj.get("highThresholds"), at("highThresholds"))
    prod_low = dec.thresholds(obj.get("prodLowThresholds"), at("prodLowThresholds"))
    prod_high = dec.thresholds(obj.get("prodHighThresholds"), at("prodHighThresholds"))
    weights = _default_weights(
        dec.weights(obj.get("resourceWeights"), at("resourceWeights")), low, high
    )
    top_anomaly = _default_top_anomaly(
        _anomaly(dec, obj.get("anomalyCondition"), at("anomalyCondition"))
    )
    namespaces = dec.object(
        obj.get("evictableNamespaces"), at("evictableNamespaces"), ("include", "exclude")
    )
    default_pool = NodePool(
        name=DEFAULT_POOL,
        node_selector=dec.selector(obj.get("nodeSelector"), at("nodeSelector")),
        use_deviation_thresholds=bool(
            dec.boolean(obj.get("useDeviationThresholds"), at("useDeviationThresholds"))
        ),
        low=low,
        high=high,
        prod_low=prod_low,
        prod_high=prod_high,
        resource_weights=weights,
        anomaly=top_anomaly,
    )
    pools = [default_pool]
    raw_pools = obj.get("nodePools")
    if raw_pools is not None and not isinstance(raw_pools, list):
        dec.type_error(at("nodePools"), raw_pools, "a list")
        raw_pools = None
    for i, raw_pool in enumerate(raw_pools or ()):
        pools.append(_pool(dec, raw_pool, fe.index(at("nodePools"), i), default_pool))
    selectors = []
    raw_selectors = obj.get("podSelectors")
    if raw_selectors is not None and not isinstance(raw_selectors, list):
        dec.type_error(at("podSelectors"), raw_selectors, "a list")
        raw_selectors = None
    for i, item in enumerate(raw_selectors or ()):
        entry = dec.object(item, fe.index(at("podSelectors"), i), ("name", "selector"))
        selectors.append(
            (
                str(entry.get("name") or ""),
                dec.selector(
                    entry.get("selector"), fe.child(fe.index(at("podSelectors"), i), "selector")
                ),
            )
        )
    expiration = dec.integer(
        obj.get("nodeMetricExpirationSeconds"), at("nodeMetricExpirationSeconds")
    )
    args = LowNodeLoadArgs(
        paused=bool(dec.boolean(obj.get("paused"), at("paused"))),
        dry_run=bool(dec.boolean(obj.get("dryRun"), at("dryRun"))),
        number_of_nodes=dec.bounded(obj.get("numberOfNodes"), at("numberOfNodes"), 32) or 0,
        node_metric_expiration_seconds=DEFAULT_NODE_METRIC_EXPIRATION_SECONDS
        if expiration is None
        else expiration,
        evictable_include=dec.strings(
            namespaces.get("include"), fe.child(at("evictableNamespaces"), "include")
        ),
        evictable_exclude=dec.strings(
            namespaces.get("exclude"), fe.child(at("evictableNamespaces"), "exclude")
        ),
        pod_selectors=tuple(selectors),
        node_fit=dec.boolean(obj.get("nodeFit"), at("nodeFit")) is not False,
        detector_cache_timeout=dec.duration(
            obj.get("detectorCacheTimeout"), at("detectorCacheTimeout")
        )
        or DEFAULT_DETECTOR_CACHE_TIMEOUT,
        node_pools=tuple(pools),
        raw=copy.deepcopy(dict(obj)),
    )
    if dec.errors:
        raise ConfigurationInvalid(dec.errors)
    return args


def _pool(dec: _Decoder, value: Any, path: str, top: NodePool) -> NodePool:
    """``SetDefaults_LowNodeLoadNodePools`` for one pool."""
    obj = dec.object(value, path, _POOL_FIELDS)
    at: Callable[[str], str] = lambda name: fe.child(path, name)  # noqa: E731

    def inherit(name: str, inherited: Thresholds | None) -> Thresholds | None:
        own = dec.thresholds(obj.get(name), at(name))
        return inherited if own is None else own

    weights = dec.weights(obj.get("resourceWeights"), at("resourceWeights"))
    return NodePool(
        name=str(obj.get("name") or ""),
        node_selector=dec.selector(obj.get("nodeSelector"), at("nodeSelector")),
        use_deviation_thresholds=bool(
            dec.boolean(obj.get("useDeviationThresholds"), at("useDeviationThresholds"))
        ),
        low=inherit("lowThresholds", top.low),
        high=inherit("highThresholds", top.high),
        prod_low=inherit("prodLowThresholds", top.prod_low),
        prod_high=inherit("prodHighThresholds", top.prod_high),
        resource_weights=top.resource_weights if weights is None else weights,
        anomaly=_pool_anomaly(
            _anomaly(dec, obj.get("anomalyCondition"), at("anomalyCondition")), top.anomaly
        ),
    )


# -- validation ---------------------------------------------------------------------------------


def validate_args(args: LowNodeLoadArgs, path: str = "") -> list[FieldError]:
    """``ValidateLowLoadUtilizationArgs`` on the converted args (pool 0 is the default pool)."""
    errors: list[FieldError] = []
    if args.number_of_nodes < 0:
        errors.append(
            fe.invalid(
                fe.child(path, "numberOfNodes"),
                args.number_of_nodes,
                "must be greater than or equal to 0",
            )
        )
    if args.node_metric_expiration_seconds <= 0:
        errors.append(
            fe.invalid(
                "nodeMetricExpiredSeconds",
                args.node_metric_expiration_seconds,
                "nodeMetricExpiredSeconds should be a positive value",
            )
        )
    if args.evictable_include and args.evictable_exclude:
        errors.append(
            fe.invalid(
                fe.child(path, "evictableNamespaces"),
                {"include": list(args.evictable_include), "exclude": list(args.evictable_exclude)},
                "only one of Include/Exclude namespaces can be set",
            )
        )
    for i, (_, selector) in enumerate(args.pod_selectors):
        errors.extend(_selector_errors(selector, fe.index(fe.child(path, "podSelectors"), i)))
    for i, pool in enumerate(args.node_pools):
        errors.extend(_pool_errors(pool, fe.index(fe.child(path, "nodePools"), i)))
    return errors


def _selector_errors(selector: Mapping[str, Any] | None, path: str) -> list[FieldError]:
    if selector is None:
        return []
    try:
        parse_label_selector(selector, path)
    except SelectorError as exc:
        return [fe.invalid(path, selector, str(exc))]
    return []


def _pool_errors(pool: NodePool, path: str) -> list[FieldError]:
    errors = _selector_errors(pool.node_selector, fe.child(path, "nodeSelector"))
    low, high = pool.low or {}, pool.high or {}
    prod_low, prod_high = pool.prod_low or {}, pool.prod_high or {}
    for name in sorted(high):
        if high[name] < 0:
            errors.append(
                fe.invalid(
                    fe.key(fe.child(path, "highThresholds"), name),
                    high[name],
                    "percentage must be greater than or equal to 0",
                )
            )
    for name in sorted(low):
        where = fe.key(fe.child(path, "lowThresholds"), name)
        if low[name] < 0:
            errors.append(
                fe.invalid(where, low[name], "percentage must be greater than or equal to 0")
            )
        if name in high and low[name] > high[name]:
            errors.append(
                fe.invalid(
                    where, low[name], "low percentage must be less than or equal to highThresholds"
                )
            )
    for name in sorted(prod_high):
        where = fe.key(fe.child(path, "ProdHighThresholds"), name)
        if prod_high[name] < 0:
            errors.append(
                fe.invalid(where, prod_high[name], "percentage must be greater than or equal to 0")
            )
        if name in high and prod_high[name] > high[name]:
            errors.append(
                fe.invalid(
                    where,
                    prod_high[name],
                    "node percentage must be greater than or equal to prodHighThresholds",
                )
            )
    for name in sorted(prod_low):
        where = fe.key(fe.child(path, "ProdLowThresholds"), name)
        if prod_low[name] < 0:
            errors.append(
                fe.invalid(where, prod_low[name], "percentage must be greater than or equal to 0")
            )
        if name in prod_high and prod_low[name] > prod_high[name]:
            errors.append(
                fe.invalid(
                    where,
                    prod_low[name],
                    "low percentage must be less than or equal to prodHighThresholds",
                )
            )
    anomaly_path = fe.child(path, "anomalyDetectionThresholds")
    if pool.anomaly.consecutive_abnormalities <= 0:
        errors.append(
            fe.invalid(
                fe.child(anomaly_path, "consecutiveAbnormalities"),
                pool.anomaly.consecutive_abnormalities,
                "consecutiveAbnormalities must be greater than 0",
            )
        )
    if pool.anomaly.consecutive_normalities <= 0:
        errors.append(
            fe.invalid(
                fe.child(anomaly_path, "consecutiveNormalities"),
                pool.anomaly.consecutive_normalities,
                "consecutiveNormalities must be greater than 0",
            )
        )
    return errors


def load_args(raw: Mapping[str, Any] | None, path: str = "") -> LowNodeLoadArgs:
    """Decoded, defaulted and validated args; :class:`ConfigurationInvalid` when New() fails."""
    args = decode_args(raw, path)
    errors = validate_args(args, path)
    if errors:
        raise ConfigurationInvalid(errors)
    return args
