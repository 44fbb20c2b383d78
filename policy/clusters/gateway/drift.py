"""Drift: what in the cluster no longer matches what schedboard last wrote there.

Someone may edit the scheduler ConfigMap by hand, or ``kubectl annotate`` a node schedboard
manages. The next push would silently undo that; drift detection shows it first, with the
diff, so an operator can fold the edit into a policy or push over it knowingly. It compares
with what schedboard *wrote* (the caller stores it), not with what it would write now: a policy
edited since the last push is pending, not drift. The functions compare objects already read
(a refresh reads the cluster once); they do no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from policy.clusters.gateway.apply import colocation_fields, same_document
from policy.clusters.gateway.changes import unified_diff
from scoring import ANNOTATION_USAGE_THRESHOLDS


@dataclass(frozen=True)
class Drift:
    """``expected`` is what schedboard last wrote, ``actual`` what the cluster has (None:
    the value, or its whole object, is gone)."""

    kind: str
    namespace: str
    name: str
    field: str
    expected: str | None
    actual: str | None

    @property
    def diff(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        label = f"{self.kind}/{where}{self.name} {self.field}"
        return unified_diff(self.expected, self.actual, label, sides=("last written", "cluster"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "expected": self.expected,
            "actual": self.actual,
            "diff": self.diff,
        }


def configmap_key_drift(
    configmap: Mapping[str, Any] | None, namespace: str, name: str, key: str, last_written: str
) -> Drift | None:
    """The drift of the read ``configmap``'s ``data[key]`` (None: the ConfigMap is gone) from
    ``last_written``, or None if it holds the same document (an adopted configuration keeps
    its own layout and comments; a push that changed nothing in it did not rewrite it)."""
    actual = ((configmap or {}).get("data") or {}).get(key)
    if actual == last_written or (actual is not None and same_document(actual, last_written)):
        return None
    return Drift("ConfigMap", namespace, name, f"data[{key}]", last_written, actual)


def colocation_drift(
    configmap: Mapping[str, Any] | None,
    namespace: str,
    name: str,
    key: str,
    written: Mapping[str, Any],
) -> list[Drift]:
    """The collect-policy fields of the read slo-controller ConfigMap's ``data[key]`` that
    differ from what schedboard last wrote there (``written``: field -> value); fields it
    does not manage are not looked at."""
    text = ((configmap or {}).get("data") or {}).get(key)
    actual = colocation_fields(text)
    return [
        Drift(
            "ConfigMap",
            namespace,
            name,
            f"data[{key}] {field}",
            _json(written[field]),
            _json(actual.get(field)),
        )
        for field in sorted(written)
        if actual.get(field) != written[field]
    ]


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


def annotation_drift(
    nodes: Iterable[Mapping[str, Any]],
    last_written: Mapping[str, str],
    *,
    annotation: str = ANNOTATION_USAGE_THRESHOLDS,
) -> list[Drift]:
    """Nodes (as read) whose ``annotation`` differs from what schedboard wrote (node name ->
    value); a node that is gone has drifted to None."""
    by_name = {node["metadata"]["name"]: node for node in nodes}
    field_name = f"metadata.annotations[{annotation}]"
    drifts = []
    for name in sorted(last_written):
        node = by_name.get(name)
        actual = (node["metadata"].get("annotations") or {}).get(annotation) if node else None
        if actual != last_written[name]:
            drifts.append(Drift("Node", "", name, field_name, last_written[name], actual))
    return drifts
