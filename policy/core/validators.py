"""Field validators for policy models and serializers.

Kubernetes name rules come from the engine (``scoring.k8s_names``), so the API and the
engine agree on what a valid name is. :func:`validate_json_value` bounds the free-form JSON
fields: what PostgreSQL cannot store (NUL characters, lone surrogates) and what no sane policy
needs (deep nesting, huge documents) is refused with a message instead of failing the request.
"""

from __future__ import annotations

import json
import math
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible

from scoring import (
    LOADAWARE,
    SelectorError,
    fits_int64,
    is_dns1123_subdomain,
    is_label_key,
    parse_label_selector,
)
from scoring import describe_selector_error as describe_error

MAX_JSON_DEPTH = 16
MAX_JSON_BYTES = 256 * 1024
MAX_JSON_ITEMS = 2000  # entries of one list or object
_CONFIGMAP_KEY_RE = re.compile(r"[-._a-zA-Z0-9]+")
_DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def dns1123_subdomain_validator(value: str) -> None:
    problems = is_dns1123_subdomain(value)
    if problems:
        raise ValidationError("; ".join(problems))


def dns1123_label_validator(value: str) -> None:
    if len(value) > 63 or not _DNS1123_LABEL_RE.fullmatch(value):
        raise ValidationError(
            "must be a lowercase RFC 1123 label: at most 63 lower case alphanumeric characters "
            "or '-', starting and ending with an alphanumeric character"
        )


def configmap_key_validator(value: str) -> None:
    if len(value) > 253 or not _CONFIGMAP_KEY_RE.fullmatch(value) or value in (".", ".."):
        raise ValidationError(
            "a ConfigMap key must consist of alphanumeric characters, '-', '_' or '.' (at most 253)"
        )


def timezone_validator(value: str) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            f"{value!r} is not an IANA time zone (e.g. UTC, Europe/Paris)."
        ) from None


def _check_string(text: str, where: str) -> None:
    if "\x00" in text:
        raise ValidationError(f"{where}: NUL characters are not allowed.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(f"{where}: not valid Unicode (lone surrogate).") from None


def validate_json_value(value: Any, *, max_bytes: int = MAX_JSON_BYTES) -> None:
    """Refuse JSON that cannot be stored or is unreasonably large or deep."""

    def walk(item: Any, where: str, depth: int) -> None:
        if depth > MAX_JSON_DEPTH:
            raise ValidationError(f"{where}: nested deeper than {MAX_JSON_DEPTH} levels.")
        if isinstance(item, str):
            _check_string(item, where)
        elif isinstance(item, bool) or item is None:
            return
        elif isinstance(item, int):
            if not fits_int64(item):
                raise ValidationError(f"{where}: {item} is outside the 64-bit integer range.")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValidationError(f"{where}: numbers must be finite.")
        elif isinstance(item, Mapping):
            if len(item) > MAX_JSON_ITEMS:
                raise ValidationError(f"{where}: more than {MAX_JSON_ITEMS} entries.")
            for key, child in item.items():
                if not isinstance(key, str):
                    raise ValidationError(f"{where}: object keys must be strings.")
                _check_string(key, where)
                walk(child, f"{where}.{key}" if where else key, depth + 1)
        elif isinstance(item, list | tuple):
            if len(item) > MAX_JSON_ITEMS:
                raise ValidationError(f"{where}: more than {MAX_JSON_ITEMS} items.")
            for i, child in enumerate(item):
                walk(child, f"{where}[{i}]", depth + 1)
        else:
            raise ValidationError(f"{where}: {type(item).__name__} is not a JSON value.")

    walk(value, "", 0)
    if len(json.dumps(value)) > max_bytes:
        raise ValidationError(f"larger than {max_bytes // 1024} KiB of JSON.")


@deconstructible
class JsonValueValidator:
    """:func:`validate_json_value` with a size limit, usable in model field definitions."""

    def __init__(self, max_bytes: int = MAX_JSON_BYTES) -> None:
        self.max_bytes = max_bytes

    def __call__(self, value: Any) -> None:
        validate_json_value(value, max_bytes=self.max_bytes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonValueValidator) and other.max_bytes == self.max_bytes

    def __hash__(self) -> int:
        return hash(self.max_bytes)


json_validator = JsonValueValidator


MAX_RESOURCES = 64


def resource_map_validator(value: Any) -> None:
    """``map[ResourceName]int64``: resource names to integers. The one rule for such maps,
    whether they arrive through the API, a form or the ORM."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ValidationError("Must be an object mapping resource names to integers.")
    if len(value) > MAX_RESOURCES:
        raise ValidationError(f"At most {MAX_RESOURCES} resources.")
    for name, number in value.items():
        if not isinstance(name, str) or not name or len(name) > 253:
            shown = json.dumps(name)[:40] if isinstance(name, str) else repr(name)
            raise ValidationError(f"{shown}: resource names are 1-253 characters.")
        _check_string(name, name)
        if problems := is_label_key(name):  # validation.IsQualifiedName, as ResourceNames are
            raise ValidationError(f"{name}: not a resource name: {problems[0]}")
        if isinstance(number, bool) or not isinstance(number, int):
            raise ValidationError(f"{name}: must be an integer, not {json.dumps(number)}.")
        if not fits_int64(number):
            raise ValidationError(f"{name}: {number} is outside the 64-bit integer range.")


def selector_errors(selector: Any, path: str) -> list[tuple[str, str]]:
    """(field path, message) for each problem of a ``metav1.LabelSelector``, as upstream's
    ``LabelSelectorAsSelector`` would refuse it (the engine's parser)."""
    if not isinstance(selector, Mapping):
        return [(path, "Must be a label selector object ({matchLabels, matchExpressions}).")]
    unknown = sorted(set(selector) - {"matchLabels", "matchExpressions"})
    if unknown:
        return [(path, f"Unknown field(s): {', '.join(map(str, unknown))}.")]
    try:
        parse_label_selector(selector, path)
    except SelectorError as exc:
        return [(path, describe_error(error)) for error in exc.errors]
    return []


def plugin_config_validator(entries: Any) -> None:
    """A profile's stored ``pluginConfig``: LoadAwareScheduling's args are the profile's own
    LoadAware args object (so they are validated and edited field by field), never an entry."""
    for entry in entries or []:
        if isinstance(entry, Mapping) and entry.get("name") == LOADAWARE:
            raise ValidationError(
                f"{LOADAWARE}'s args are the profile's LoadAware args (/api/v1/loadaware-args/ "
                "or the LoadAware args editor), not a pluginConfig entry."
            )
