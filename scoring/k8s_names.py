"""Kubernetes name rules with apimachinery's messages (k8s.io/apimachinery v0.35).

``is_label_key`` is ``content.IsLabelKey`` (also ``validation.IsQualifiedName``), used by
``metav1validation.ValidateLabelName`` for topology keys and ignored resources, and by the
extender managed-resource check. Lengths are in bytes, as Go's ``len(string)``.
"""

from __future__ import annotations

import re

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_MAX = 63
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)

_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MAX = 63
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)


def max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def empty_error() -> str:
    return "must be non-empty"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``content.RegexError`` (note Go's double space before each ``or``)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{example}', "
    return msg + f"regex used for validation is '{fmt}')"


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8"))


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if _byte_len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(_DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_label_key(value: str) -> list[str]:
    """``content.IsLabelKey`` / ``validation.IsQualifiedName``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif _byte_len(name) > _LABEL_KEY_MAX:
        errs.append("name part " + max_len_error(_LABEL_KEY_MAX))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


is_qualified_name = is_label_key


def is_label_value(value: str) -> list[str]:
    """``content.IsLabelValue``."""
    errs: list[str] = []
    if _byte_len(value) > _LABEL_VALUE_MAX:
        errs.append(max_len_error(_LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_native_resource(name: str) -> bool:
    """``v1helper.IsNativeResource``: unprefixed, or under ``kubernetes.io/``."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)
