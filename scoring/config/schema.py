"""The ``kubescheduler.config.k8s.io/v1`` Go types as schemas, with a strict decoder and encoder.

kube-scheduler decodes its config file strictly (``serializer.EnableStrict``): an unknown field is
an error, and a value of the wrong JSON type cannot be decoded at all. :class:`Decoder` reports
unknown fields as :class:`~scoring.errors.FieldError` (so they are aggregated with validation
errors) and collects type errors separately (the loader turns those into an
:class:`~scoring.errors.InputError`). A JSON ``null`` means "unset", as for Go pointers.

:func:`encode` renders a decoded value the way Go's ``encoding/json`` marshals the struct: fields
in declaration order, ``omitempty`` honoured, non-pointer fields always present (zero when unset),
durations as ``Duration.String()``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring import field_errors as fe
from scoring.durations import canonical_duration
from scoring.errors import FieldError
from scoring.goint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

_INT_RANGES = {"int32": (INT32_MIN, INT32_MAX), "int64": (INT64_MIN, INT64_MAX)}


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar: ``int32``, ``int64``, ``float32``, ``bool``, ``string``, ``duration``
    (``metav1.Duration``, a Go duration string) or ``bytes`` (base64 string)."""

    kind: str


@dataclass(frozen=True)
class ListOf:
    item: Node


@dataclass(frozen=True)
class MapOf:
    """A JSON object with string keys and values of one type (``map[string]T``)."""

    value: Node


@dataclass(frozen=True)
class AnyObject:
    """A ``runtime.RawExtension``: any JSON object, kept as given."""


@dataclass(frozen=True)
class Field:
    name: str
    node: Node
    pointer: bool = False
    omitempty: bool = False


@dataclass(frozen=True)
class Struct:
    """A Go struct; ``type_meta`` structs also accept (and keep) ``apiVersion`` and ``kind``."""

    go_name: str
    fields: tuple[Field, ...]
    type_meta: bool = False
    by_name: Mapping[str, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})


Node = Scalar | ListOf | MapOf | AnyObject | Struct

INT32 = Scalar("int32")
INT64 = Scalar("int64")
FLOAT32 = Scalar("float32")
BOOL = Scalar("bool")
STRING = Scalar("string")
DURATION = Scalar("duration")
BYTES = Scalar("bytes")

TYPE_META_FIELDS = ("apiVersion", "kind")


def json_kind(value: Any) -> str:
    """The JSON kind ``encoding/json`` names in "cannot unmarshal <kind> into ..." errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _expected(node: Node) -> str:
    if isinstance(node, Scalar):
        return {"duration": "a duration string", "bytes": "a base64 string"}.get(
            node.kind, node.kind
        )
    if isinstance(node, ListOf):
        return "an array"
    return "an object"


class Decoder:
    """Strict decoding of JSON-like data against a schema; see the module docstring."""

    def __init__(self) -> None:
        self.unknown: list[FieldError] = []
        self.type_errors: list[str] = []

    def _type_error(self, path: str, value: Any, node: Node, reason: str = "") -> None:
        where = path or "<root>"
        if reason:
            self.type_errors.append(f"{where}: {reason}")
        else:
            self.type_errors.append(
                f"{where}: cannot unmarshal {json_kind(value)} into {_expected(node)}"
            )

    def decode(self, node: Node, value: Any, path: str) -> Any:
        """The decoded value (plain JSON data), or ``None`` when null or undecodable."""
        if value is None:
            return None
        if isinstance(node, Scalar):
            return self._scalar(node, value, path)
        if isinstance(node, AnyObject):
            if not isinstance(value, Mapping):
                self._type_error(path, value, node)
                return None
            return _plain(value)
        if isinstance(node, ListOf):
            if not isinstance(value, list | tuple):
                self._type_error(path, value, node)
                return None
            items = [self.decode(node.item, v, fe.index(path, i)) for i, v in enumerate(value)]
            # A null element of a list of structs decodes to the zero struct in Go.
            return [
                {} if item is None and isinstance(node.item, Struct) else item for item in items
            ]
        if isinstance(node, MapOf):
            if not isinstance(value, Mapping):
                self._type_error(path, value, node)
                return None
            out: dict[str, Any] = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    self._type_error(path, k, STRING, f"map key {k!r} is not a string")
                    continue
                decoded = self.decode(node.value, v, fe.key(path, k))
                if decoded is not None:
                    out[k] = decoded
            return out
        return self._struct(node, value, path)

    def _struct(self, node: Struct, value: Any, path: str) -> dict[str, Any] | None:
        if not isinstance(value, Mapping):
            self._type_error(path, value, node)
            return None
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                self._type_error(path, k, STRING, f"field name {k!r} is not a string")
                continue
            if node.type_meta and k in TYPE_META_FIELDS:
                if v is not None and not isinstance(v, str):
                    self._type_error(fe.child(path, k), v, STRING)
                elif v is not None:
                    out[k] = v
                continue
            spec = node.by_name.get(k)
            if spec is None:
                self.unknown.append(fe.invalid(fe.child(path, k), v, f'unknown field "{k}"'))
                continue
            decoded = self.decode(spec.node, v, fe.child(path, k))
            if decoded is not None:
                out[k] = decoded
        return out

    def _scalar(self, node: Scalar, value: Any, path: str) -> Any:
        kind = node.kind
        if kind in _INT_RANGES:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self._type_error(path, value, node)
                return None
            if isinstance(value, float):
                if not value.is_integer():
                    self._type_error(
                        path, value, node, f"cannot unmarshal number {value} into {kind}"
                    )
                    return None
                value = int(value)
            low, high = _INT_RANGES[kind]
            if not low <= value <= high:
                self._type_error(path, value, node, f"cannot unmarshal number {value} into {kind}")
                return None
            return value
        if kind == "float32":
            if isinstance(value, bool) or not isinstance(value, int | float):
                self._type_error(path, value, node)
                return None
            return float(value)
        if kind == "bool":
            if not isinstance(value, bool):
                self._type_error(path, value, node)
                return None
            return value
        if not isinstance(value, str):
            self._type_error(path, value, node)
            return None
        if kind == "duration":
            try:
                return canonical_duration(value)
            except ValueError as exc:
                self._type_error(path, value, node, str(exc))
                return None
        if kind == "bytes":
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                self._type_error(path, value, node, "illegal base64 data")
                return None
        return value


def _plain(value: Any) -> Any:
    """A deep copy made of dicts, lists and scalars."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def zero_value(node: Node) -> Any:
    """What Go marshals for an unset non-pointer field of this type."""
    if isinstance(node, Scalar):
        return {
            "int32": 0,
            "int64": 0,
            "float32": 0,
            "bool": False,
            "string": "",
            "duration": "0s",
            "bytes": None,
        }[node.kind]
    if isinstance(node, Struct):
        return encode(node, {})
    return None


def _is_empty(node: Node, value: Any) -> bool:
    """Go's ``omitempty`` test; structs (``metav1.Duration`` included) are never empty."""
    if value is None:
        return True
    if isinstance(node, Struct) or (isinstance(node, Scalar) and node.kind == "duration"):
        return False
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, str | list | dict):
        return len(value) == 0
    return False


def encode(node: Node, value: Any) -> Any:
    """Render decoded data as Go's ``encoding/json`` would marshal the struct."""
    if value is None:
        return None
    if isinstance(node, Scalar):
        if node.kind == "float32" and isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if isinstance(node, AnyObject):
        return _plain(value)
    if isinstance(node, ListOf):
        return [encode(node.item, v) for v in value]
    if isinstance(node, MapOf):
        return {k: encode(node.value, v) for k, v in value.items()}
    out: dict[str, Any] = {}
    if node.type_meta:
        for name in TYPE_META_FIELDS:
            if value.get(name):
                out[name] = value[name]
    for spec in node.fields:
        present = value.get(spec.name) is not None
        if not present:
            if spec.pointer:
                if not spec.omitempty:
                    out[spec.name] = None
                continue
            zero = zero_value(spec.node)
            if spec.omitempty and _is_empty(spec.node, zero):
                continue
            out[spec.name] = zero
            continue
        rendered = encode(spec.node, value[spec.name])
        if spec.omitempty and not spec.pointer and _is_empty(spec.node, rendered):
            continue
        out[spec.name] = rendered
    return out


# ----------------------------------------------------------------------------------------------
# k8s.io/kube-scheduler/config/v1 (and the component-base / core/v1 types it embeds), v0.35.

PLUGIN = Struct(
    "Plugin",
    (Field("name", STRING), Field("weight", INT32, pointer=True, omitempty=True)),
)
PLUGIN_SET = Struct(
    "PluginSet",
    (
        Field("enabled", ListOf(PLUGIN), omitempty=True),
        Field("disabled", ListOf(PLUGIN), omitempty=True),
    ),
)
# Declaration order of the v1 Plugins struct (also the JSON output order).
PLUGINS_FIELD_ORDER = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    "multiPoint",
)
PLUGINS = Struct(
    "Plugins",
    tuple(Field(name, PLUGIN_SET, omitempty=True) for name in PLUGINS_FIELD_ORDER),
)
PLUGIN_CONFIG = Struct(
    "PluginConfig",
    (Field("name", STRING), Field("args", AnyObject(), omitempty=True)),
)
PROFILE = Struct(
    "KubeSchedulerProfile",
    (
        Field("schedulerName", STRING, pointer=True, omitempty=True),
        Field("percentageOfNodesToScore", INT32, pointer=True, omitempty=True),
        Field("plugins", PLUGINS, pointer=True, omitempty=True),
        Field("pluginConfig", ListOf(PLUGIN_CONFIG), omitempty=True),
    ),
)
EXTENDER_TLS_CONFIG = Struct(
    "ExtenderTLSConfig",
    (
        Field("insecure", BOOL, omitempty=True),
        Field("serverName", STRING, omitempty=True),
        Field("certFile", STRING, omitempty=True),
        Field("keyFile", STRING, omitempty=True),
        Field("caFile", STRING, omitempty=True),
        Field("certData", BYTES, omitempty=True),
        Field("keyData", BYTES, omitempty=True),
        Field("caData", BYTES, omitempty=True),
    ),
)
EXTENDER_MANAGED_RESOURCE = Struct(
    "ExtenderManagedResource",
    (Field("name", STRING), Field("ignoredByScheduler", BOOL, omitempty=True)),
)
EXTENDER = Struct(
    "Extender",
    (
        Field("urlPrefix", STRING),
        Field("filterVerb", STRING, omitempty=True),
        Field("preemptVerb", STRING, omitempty=True),
        Field("prioritizeVerb", STRING, omitempty=True),
        Field("weight", INT64, omitempty=True),
        Field("bindVerb", STRING, omitempty=True),
        Field("enableHTTPS", BOOL, omitempty=True),
        Field("tlsConfig", EXTENDER_TLS_CONFIG, pointer=True, omitempty=True),
        Field("httpTimeout", DURATION, omitempty=True),
        Field("nodeCacheCapable", BOOL, omitempty=True),
        Field("managedResources", ListOf(EXTENDER_MANAGED_RESOURCE), omitempty=True),
        Field("ignorable", BOOL, omitempty=True),
    ),
)
LEADER_ELECTION = Struct(
    "LeaderElectionConfiguration",
    (
        Field("leaderElect", BOOL, pointer=True),
        Field("leaseDuration", DURATION),
        Field("renewDeadline", DURATION),
        Field("retryPeriod", DURATION),
        Field("resourceLock", STRING),
        Field("resourceName", STRING),
        Field("resourceNamespace", STRING),
    ),
)
CLIENT_CONNECTION = Struct(
    "ClientConnectionConfiguration",
    (
        Field("kubeconfig", STRING),
        Field("acceptContentTypes", STRING),
        Field("contentType", STRING),
        Field("qps", FLOAT32),
        Field("burst", INT32),
    ),
)
KUBE_SCHEDULER_CONFIGURATION = Struct(
    "KubeSchedulerConfiguration",
    (
        Field("parallelism", INT32, pointer=True, omitempty=True),
        Field("leaderElection", LEADER_ELECTION),
        Field("clientConnection", CLIENT_CONNECTION),
        Field("enableProfiling", BOOL, pointer=True, omitempty=True),
        Field("enableContentionProfiling", BOOL, pointer=True, omitempty=True),
        Field("percentageOfNodesToScore", INT32, pointer=True, omitempty=True),
        Field("podInitialBackoffSeconds", INT64, pointer=True, omitempty=True),
        Field("podMaxBackoffSeconds", INT64, pointer=True, omitempty=True),
        Field("profiles", ListOf(PROFILE), omitempty=True),
        Field("extenders", ListOf(EXTENDER), omitempty=True),
        Field("delayCacheUntilActive", BOOL, omitempty=True),
    ),
    type_meta=True,
)

# core/v1 and meta/v1 types used inside plugin args.
LABEL_SELECTOR_REQUIREMENT = Struct(
    "LabelSelectorRequirement",
    (
        Field("key", STRING),
        Field("operator", STRING),
        Field("values", ListOf(STRING), omitempty=True),
    ),
)
LABEL_SELECTOR = Struct(
    "LabelSelector",
    (
        Field("matchLabels", MapOf(STRING), omitempty=True),
        Field("matchExpressions", ListOf(LABEL_SELECTOR_REQUIREMENT), omitempty=True),
    ),
)
TOPOLOGY_SPREAD_CONSTRAINT = Struct(
    "TopologySpreadConstraint",
    (
        Field("maxSkew", INT32),
        Field("topologyKey", STRING),
        Field("whenUnsatisfiable", STRING),
        Field("labelSelector", LABEL_SELECTOR, pointer=True, omitempty=True),
        Field("minDomains", INT32, pointer=True, omitempty=True),
        Field("nodeAffinityPolicy", STRING, pointer=True, omitempty=True),
        Field("nodeTaintsPolicy", STRING, pointer=True, omitempty=True),
        Field("matchLabelKeys", ListOf(STRING), omitempty=True),
    ),
)
NODE_SELECTOR_REQUIREMENT = Struct(
    "NodeSelectorRequirement",
    (
        Field("key", STRING),
        Field("operator", STRING),
        Field("values", ListOf(STRING), omitempty=True),
    ),
)
NODE_SELECTOR_TERM = Struct(
    "NodeSelectorTerm",
    (
        Field("matchExpressions", ListOf(NODE_SELECTOR_REQUIREMENT), omitempty=True),
        Field("matchFields", ListOf(NODE_SELECTOR_REQUIREMENT), omitempty=True),
    ),
)
NODE_SELECTOR = Struct(
    "NodeSelector",
    (Field("nodeSelectorTerms", ListOf(NODE_SELECTOR_TERM)),),
)
PREFERRED_SCHEDULING_TERM = Struct(
    "PreferredSchedulingTerm",
    (Field("weight", INT32), Field("preference", NODE_SELECTOR_TERM)),
)
NODE_AFFINITY = Struct(
    "NodeAffinity",
    (
        Field(
            "requiredDuringSchedulingIgnoredDuringExecution",
            NODE_SELECTOR,
            pointer=True,
            omitempty=True,
        ),
        Field(
            "preferredDuringSchedulingIgnoredDuringExecution",
            ListOf(PREFERRED_SCHEDULING_TERM),
            omitempty=True,
        ),
    ),
)
