"""koordlet's eviction thresholds: ``slo-controller-config``'s ``resource-threshold-config``.

Upstream: pkg/slo-controller/nodeslo/resource_strategy.go (the cluster strategy merged over
the defaults of pkg/util/sloconfig/nodeslo_config.go, each node strategy merged over the
cluster strategy, the *first* node strategy whose selector matches wins) and
apis/slo/v1alpha1/nodeslo_types.go (the fields). ``memoryEvictLowerPercent`` defaults to the
threshold − 2 in koordlet (qosmanager/plugins/memoryevict/memory_evict.go). The strategies are
kept as written; only the fields the coherence rules read are typed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.errors import InputError
from scoring.objects import Node
from scoring.podselectors import label_selector
from scoring.selectors import SelectorError

CONFIGMAP_KEY = "resource-threshold-config"
DEFAULTS: Mapping[str, Any] = {
    "enable": False,
    "cpuSuppressThresholdPercent": 65,
    "cpuSuppressPolicy": "cpuset",
    "memoryEvictThresholdPercent": 70,
    "cpuEvictPolicy": "evictByRealLimit",
}


@dataclass(frozen=True)
class Strategy:
    """One node's resolved ``ResourceThresholdStrategy`` and where it came from."""

    values: Mapping[str, Any]
    source: str  # "clusterStrategy" or "nodeStrategies[i] (name)": the strategy that applies
    sources: Mapping[str, str]  # field → where its value was written ("default" when not)

    @property
    def enabled(self) -> bool:
        return self.values.get("enable") is True

    @property
    def memory_evict_threshold(self) -> int | None:
        value = self.values.get("memoryEvictThresholdPercent")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def memory_evict_lower(self) -> int | None:
        lower = self.values.get("memoryEvictLowerPercent")
        if isinstance(lower, int) and not isinstance(lower, bool):
            return lower
        threshold = self.memory_evict_threshold
        return None if threshold is None else threshold - 2

    def field_source(self, name: str) -> str:
        return self.sources.get(name, "default")


@dataclass(frozen=True)
class ResourceThresholdConfig:
    raw: Mapping[str, Any]
    cluster: Mapping[str, Any]
    node_strategies: tuple[tuple[str, Mapping[str, Any] | None, Mapping[str, Any]], ...]

    def for_node(self, node: Node) -> Strategy:
        """``getResourceThresholdSpec``: the first matching node strategy, else the cluster's."""
        base = {**DEFAULTS, **self.cluster}
        written = dict.fromkeys(self.cluster, "clusterStrategy")
        for i, (name, selector, values) in enumerate(self.node_strategies):
            if selector is None:
                continue
            try:
                matches = label_selector(selector, "nodeSelector").matches(node.labels)
            except SelectorError:
                continue
            if matches:
                where = f"nodeStrategies[{i}] ({name})"
                sources = {**written, **dict.fromkeys(values, where)}
                return Strategy({**base, **values}, where, sources)
        return Strategy(base, "clusterStrategy", written)


def parse(text: str | None) -> ResourceThresholdConfig:
    """Read the key's JSON; :class:`InputError` naming the field when it is not usable."""
    if not text:
        return ResourceThresholdConfig({}, {}, ())
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{CONFIGMAP_KEY}: not valid JSON: {exc}") from None
    if not isinstance(raw, Mapping):
        raise InputError(f"{CONFIGMAP_KEY}: expected an object")
    cluster = raw.get("clusterStrategy") or {}
    if not isinstance(cluster, Mapping):
        raise InputError(f"{CONFIGMAP_KEY}: clusterStrategy: expected an object")
    strategies = []
    for i, entry in enumerate(raw.get("nodeStrategies") or ()):
        if not isinstance(entry, Mapping):
            raise InputError(f"{CONFIGMAP_KEY}: nodeStrategies[{i}]: expected an object")
        values = {k: v for k, v in entry.items() if k not in ("name", "nodeSelector")}
        selector = entry.get("nodeSelector")
        strategies.append(
            (
                str(entry.get("name") or ""),
                selector if isinstance(selector, Mapping) else None,
                values,
            )
        )
    return ResourceThresholdConfig(raw, cluster, tuple(strategies))
