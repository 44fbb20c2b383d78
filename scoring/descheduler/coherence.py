"""Contradictions between the three places a Koordinator cluster acts on node load.

koord-scheduler's LoadAwareScheduling admits a pod while a node's usage stays within ``S``
(its args, or the node annotation ``scheduling.koordinator.sh/usage-thresholds`` that replaces
whole maps); koord-descheduler's LowNodeLoad evicts from nodes above ``H`` (the high threshold
of the node's pool); koordlet's BEMemoryEvict evicts best-effort pods above ``M``
(``memoryEvictThresholdPercent`` of the node's resource-threshold strategy). The rules, per node
and resource, in normal (non-deviation) mode:

- R1 admit-then-evict: LowNodeLoad enabled and ``S = 0`` (unchecked) or ``S > H``: pods
  admitted between H and S land on a node LowNodeLoad evicts from.
- R2 phantom headroom: ``0 < S < H``: LowNodeLoad counts headroom the scheduler refuses
  (severe when ``S ≤ L``: the targets themselves are refused).
- R3 BE memory loop (koordinator #2477): BEMemoryEvict on and ``S_mem = 0`` or ``S_mem > M``.
- R4 order of action: ``M < H_mem``: koordlet evicts before LowNodeLoad reacts.
- R5 everything above S (koordinator #2538): LoadAware refuses every node for a pod that adds
  nothing, so every pod is Unschedulable; and a threshold of 100 %, which does not turn the
  check off (estimates can exceed 100 %: 0 leaves a resource unchecked).
- R6 a node in several pools is evaluated (and marked) by each.
- R7 a raw-allocatable annotation without cpu or memory: LowNodeLoad sees 0 and the node is
  always a source.
- R8 a key in ``lowThresholds`` but not in ``highThresholds``: its high threshold is 0 %.
- R10 ``low = high``: no middle band, nodes flip between source and target.
- R11 NodeMetric reported no more often than a reader's expiration: metrics read as expired.
- R9 (deviation mode) compares S with the pool's runtime ``average + high`` when a round's
  averages are given.

Every finding names each value, the field it is read from and where it was written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.descheduler.args import NodePool
from scoring.descheduler.config import DeschedulerConfiguration
from scoring.descheduler.lownodeload import new_thresholds, raw_allocatable
from scoring.descheduler.slo_thresholds import ResourceThresholdConfig
from scoring.objects import Node
from scoring.plugins.loadaware import gojson
from scoring.plugins.loadaware.nodemetric import DEFAULT_REPORT_INTERVAL_NS
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS, parse_custom
from scoring.podselectors import label_selector
from scoring.selectors import SelectorError
from scoring.snapshot import Snapshot

ERROR = "error"
WARNING = "warning"
INFO = "info"

LOADAWARE = "koord-scheduler LoadAwareScheduling"
LOWNODELOAD = "koord-descheduler LowNodeLoad"
KOORDLET = "koordlet BEMemoryEvict"
NODEMETRIC = "NodeMetric collection"


@dataclass(frozen=True)
class LoadAwareSide:
    """LoadAware's thresholds as the scheduler runs them, and where they were written."""

    usage: Mapping[str, int]
    prod: Mapping[str, int] = field(default_factory=dict)
    expiration_seconds: int | None = 180
    source: str = "koord-scheduler-config"


@dataclass(frozen=True)
class Value:
    component: str
    field: str
    value: Any
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "field": self.field,
            "value": self.value,
            "source": self.source,
        }


@dataclass
class Finding:
    rule: str
    summary: str
    severity: str
    values: list[Value]
    nodes: list[str] = field(default_factory=list)
    fix: str = ""  # which document an edit resolves it in: loadaware, lownodeload, koordlet

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.rule, tuple(repr(v) for v in self.values))  # a value may be a map

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "summary": self.summary,
            "severity": self.severity,
            "values": [v.to_dict() for v in self.values],
            "nodes": sorted(self.nodes),
            "fix": self.fix,
        }


class _Findings:
    """Findings with equal rule and values share one entry and collect their nodes."""

    def __init__(self) -> None:
        self.items: dict[tuple[Any, ...], Finding] = {}
        self._nodes: dict[tuple[Any, ...], set[str]] = {}  # each entry's nodes, to look up

    def add(self, finding: Finding, node: str | None = None) -> None:
        key = finding.key
        entry = self.items.setdefault(key, finding)
        if node is None:
            return
        seen = self._nodes.get(key)
        if seen is None:
            seen = self._nodes[key] = set(entry.nodes)
        if node not in seen:
            seen.add(node)
            entry.nodes.append(node)

    def sorted(self) -> list[Finding]:
        order = {ERROR: 0, WARNING: 1, INFO: 2}
        return sorted(self.items.values(), key=lambda f: (order[f.severity], f.rule, f.summary))


def _node_loadaware(node: Node, side: LoadAwareSide) -> tuple[Mapping[str, int], str]:
    """S for one node: the annotation's ``usageThresholds`` replace the args' map."""
    text = node.annotations.get(ANNOTATION_USAGE_THRESHOLDS)
    if text is not None:
        try:
            custom = parse_custom(text)
        except gojson.GoJSONError:
            custom = None
        if custom is not None and custom.usage:
            return custom.usage, f"node annotation {ANNOTATION_USAGE_THRESHOLDS}"
    return side.usage, side.source


def _pools_of(node: Node, pools: Sequence[NodePool]) -> list[tuple[int, NodePool]]:
    out = []
    for i, pool in enumerate(pools):
        if pool.node_selector is None:
            out.append((i, pool))
            continue
        try:
            if label_selector(pool.node_selector, "nodeSelector").matches(node.labels):
                out.append((i, pool))
        except SelectorError:
            continue
    return out


def _pool_field(config: DeschedulerConfiguration, index: int, name: str, resource: str) -> str:
    base = config.lownodeload_args_path or "LowNodeLoad args"
    where = f"{base}.{name}" if index == 0 else f"{base}.nodePools[{index - 1}].{name}"
    return f"{where}[{resource}]"


def check(
    snapshot: Snapshot,
    loadaware: LoadAwareSide | None,
    descheduler: DeschedulerConfiguration | None,
    koordlet: ResourceThresholdConfig | None,
    *,
    be_memory_evict_gate: bool = True,
    averages: Mapping[str, Mapping[str, float]] | None = None,
    descheduler_source: str = "koord-descheduler-config",
    koordlet_source: str = "slo-controller-config resource-threshold-config",
    refused: int | None = None,
) -> list[Finding]:
    """Every contradiction on the snapshot's nodes; ``averages`` (pool → resource → %) lets
    deviation-mode pools be compared; ``refused`` (how many nodes LoadAware's filter refuses
    now for a pod that adds nothing) lets R5 say when it refuses them all."""
    found = _Findings()
    if loadaware is not None:
        _above_everything(snapshot, loadaware, refused, found)
    lnl = (
        descheduler.lownodeload
        if descheduler is not None and descheduler.lownodeload_enabled
        else None
    )
    if lnl is not None and descheduler is not None:
        _args_rules(descheduler, found, descheduler_source)
    for node in snapshot.nodes:
        s_map, s_source = _node_loadaware(node, loadaware) if loadaware else ({}, "")
        if lnl is not None and descheduler is not None:
            pools = _pools_of(node, lnl.node_pools)
            if len(pools) > 1:
                names = ", ".join(p.name for _, p in pools)
                found.add(
                    Finding(
                        "R6",
                        f"node is in {len(pools)} LowNodeLoad pools ({names}) "
                        "and is evaluated by each",
                        WARNING,
                        [Value(LOWNODELOAD, "nodePools", names, descheduler_source)],
                        fix="lownodeload",
                    ),
                    node.name,
                )
            for index, pool in pools:
                if loadaware is not None:
                    _pool_rules(
                        node,
                        index,
                        pool,
                        descheduler,
                        s_map,
                        s_source,
                        found,
                        descheduler_source,
                        averages,
                    )
            _raw_allocatable_rule(node, found)
        if koordlet is not None and loadaware is not None:
            _koordlet_rules(
                node,
                koordlet,
                s_map,
                s_source,
                descheduler if lnl else None,
                found,
                be_memory_evict_gate,
                descheduler_source,
                koordlet_source,
            )
    _collection_rules(
        snapshot,
        loadaware,
        lnl.node_metric_expiration_seconds if lnl else None,
        found,
        descheduler_source,
    )
    return found.sorted()


def _args_rules(config: DeschedulerConfiguration, found: _Findings, source: str) -> None:
    assert config.lownodeload is not None
    for index, pool in enumerate(config.lownodeload.node_pools):
        if pool.use_deviation_thresholds:
            continue
        low, high = pool.low or {}, pool.high or {}
        for name in sorted(low):
            low_field = _pool_field(config, index, "lowThresholds", name)
            if name not in high:
                found.add(
                    Finding(
                        "R8",
                        f"{name} has a low threshold but no high threshold: its high threshold "
                        "is 0 %, so every node not under low is a source",
                        ERROR,
                        [
                            Value(LOWNODELOAD, low_field, low[name], source),
                            Value(
                                LOWNODELOAD,
                                _pool_field(config, index, "highThresholds", name),
                                None,
                                source,
                            ),
                        ],
                        fix="lownodeload",
                    )
                )
            elif low[name] == high[name]:
                found.add(
                    Finding(
                        "R10",
                        f"{name} low threshold equals the high threshold ({low[name]:g} %): "
                        "no middle band, nodes flip between target and source",
                        WARNING,
                        [
                            Value(LOWNODELOAD, low_field, low[name], source),
                            Value(
                                LOWNODELOAD,
                                _pool_field(config, index, "highThresholds", name),
                                high[name],
                                source,
                            ),
                        ],
                        fix="lownodeload",
                    )
                )


def _pool_rules(
    node: Node,
    index: int,
    pool: NodePool,
    config: DeschedulerConfiguration,
    s_map: Mapping[str, int],
    s_source: str,
    found: _Findings,
    source: str,
    averages: Mapping[str, Mapping[str, float]] | None,
) -> None:
    low, high, _, _ = new_thresholds(pool)
    for name in sorted(high):
        h = high[name]
        h_field = _pool_field(config, index, "highThresholds", name)
        if pool.use_deviation_thresholds:
            if (
                averages is None
                or name not in averages.get(pool.name, {})
                or low.get(name, 0.0) == 0.0
            ):
                continue
            h = min(100.0, max(0.0, averages[pool.name][name] + h))
            h_field = f"average {name} usage of pool {pool.name} + {h_field}"
        if name not in (pool.high or {}) and not pool.use_deviation_thresholds:
            continue  # filled in at 100 % by newThresholds: never a source on this resource
        s = s_map.get(name, 0)
        s_value = Value(LOADAWARE, f"usageThresholds[{name}]", s, s_source)
        h_value = Value(LOWNODELOAD, h_field, h, source)
        if s == 0 or s > h:
            what = "is not checked" if s == 0 else f"admits up to {s} %"
            found.add(
                Finding(
                    "R1",
                    f"{name}: LoadAware {what} but LowNodeLoad evicts above {h:g} %: "
                    "pods admitted in between are evicted and scheduled back",
                    ERROR,
                    [s_value, h_value],
                    fix="lownodeload",
                ),
                node.name,
            )
        elif s < h:
            l_value = low.get(name, 0.0)
            severe = s <= l_value
            detail = (
                f" (not above the low threshold {l_value:g} %: even target nodes are refused)"
                if severe
                else ""
            )
            values = [
                s_value,
                h_value,
                *(
                    [
                        Value(
                            LOWNODELOAD,
                            _pool_field(config, index, "lowThresholds", name),
                            l_value,
                            source,
                        )
                    ]
                    if severe
                    else []
                ),
            ]
            found.add(
                Finding(
                    "R2",
                    f"{name}: LowNodeLoad counts headroom up to {h:g} % "
                    f"that LoadAware refuses above {s} %{detail}",
                    ERROR if severe else WARNING,
                    values,
                    fix="lownodeload",
                ),
                node.name,
            )


def _raw_allocatable_rule(node: Node, found: _Findings) -> None:
    allocatable, where = raw_allocatable(node)
    if where == "status.allocatable":
        return
    missing = [n for n in ("cpu", "memory") if allocatable.get(n, 0) == 0]
    if missing:
        text = node.annotations.get("node.koordinator.sh/raw-allocatable")
        found.add(
            Finding(
                "R7",
                f"raw-allocatable has no {' or '.join(missing)}: LowNodeLoad sees 0 "
                "allocatable and always takes the node as a source",
                ERROR,
                [
                    Value(
                        LOWNODELOAD, "node.koordinator.sh/raw-allocatable", text, "node annotation"
                    )
                ],
                fix="",
            ),
            node.name,
        )


def _above_everything(
    snapshot: Snapshot, loadaware: LoadAwareSide, refused: int | None, found: _Findings
) -> None:
    """R5: LoadAware refusing every node, and thresholds of 100 % meant to turn it off."""
    total = len(snapshot.nodes)
    if refused is not None and total and refused >= total:
        found.add(
            Finding(
                "R5",
                f"LoadAware refuses all {total} nodes for a pod that adds nothing: every pod "
                "it filters is Unschedulable until usage falls (koordinator #2538); raise the "
                "thresholds, set them to 0 (unchecked) or disable LoadAware's Filter",
                ERROR,
                [Value(LOADAWARE, "usageThresholds", dict(loadaware.usage), loadaware.source)],
                fix="loadaware",
            )
        )
    for node in snapshot.nodes:
        s_map, s_source = _node_loadaware(node, loadaware)
        for resource, s in sorted(s_map.items()):
            if s == 100:
                found.add(
                    Finding(
                        "R5",
                        f"LoadAware's {resource} threshold of 100 % does not turn the check "
                        "off: estimates can exceed 100 %, so the node is still refused; 0 "
                        "leaves a resource unchecked",
                        WARNING,
                        [Value(LOADAWARE, f"usageThresholds[{resource}]", s, s_source)],
                        fix="loadaware",
                    ),
                    node.name,
                )


def _koordlet_rules(
    node: Node,
    koordlet: ResourceThresholdConfig,
    s_map: Mapping[str, int],
    s_source: str,
    config: DeschedulerConfiguration | None,
    found: _Findings,
    gate: bool,
    source: str,
    koordlet_source: str,
) -> None:
    strategy = koordlet.for_node(node)
    m = strategy.memory_evict_threshold
    if not strategy.enabled or not gate or m is None:
        return
    m_value = Value(
        KOORDLET,
        f"{strategy.source}.memoryEvictThresholdPercent",
        m,
        f"{koordlet_source} ({strategy.field_source('memoryEvictThresholdPercent')})",
    )
    s = s_map.get("memory", 0)
    if s == 0 or s > m:
        what = "does not check memory" if s == 0 else f"admits up to {s} % memory"
        found.add(
            Finding(
                "R3",
                f"LoadAware {what} but koordlet evicts BE pods above {m} % memory: "
                "BE pods are admitted, then killed (koordinator #2477)",
                ERROR,
                [Value(LOADAWARE, "usageThresholds[memory]", s, s_source), m_value],
                fix="loadaware",
            ),
            node.name,
        )
    if config is None or config.lownodeload is None:
        return
    for index, pool in _pools_of(node, config.lownodeload.node_pools):
        h = (pool.high or {}).get("memory")
        if h is not None and not pool.use_deviation_thresholds and m < h:
            found.add(
                Finding(
                    "R4",
                    f"koordlet evicts BE pods above {m} % memory, "
                    f"before LowNodeLoad reacts above {h:g} %",
                    INFO,
                    [
                        m_value,
                        Value(
                            LOWNODELOAD,
                            _pool_field(config, index, "highThresholds", "memory"),
                            h,
                            source,
                        ),
                    ],
                    fix="koordlet",
                ),
                node.name,
            )


def _collection_rules(
    snapshot: Snapshot,
    loadaware: LoadAwareSide | None,
    lnl_expiration: int | None,
    found: _Findings,
    source: str,
) -> None:
    readers = []
    if loadaware is not None and loadaware.expiration_seconds:
        readers.append(
            (
                LOADAWARE,
                "nodeMetricExpirationSeconds",
                loadaware.expiration_seconds,
                loadaware.source,
            )
        )
    if lnl_expiration:
        readers.append((LOWNODELOAD, "nodeMetricExpirationSeconds", lnl_expiration, source))
    for name, metric in snapshot.node_metrics.items():
        policy = ((metric.get("spec") or {}).get("metricCollectPolicy")) or {}
        interval = policy.get("reportIntervalSeconds")
        seconds = (
            interval
            if isinstance(interval, int) and not isinstance(interval, bool)
            else DEFAULT_REPORT_INTERVAL_NS // 10**9
        )
        for component, field_name, expiration, where in readers:
            if seconds >= expiration:
                found.add(
                    Finding(
                        "R11",
                        f"NodeMetric is reported every {seconds} s, no more often than {component} "
                        f"lets it expire ({expiration} s): its usage is read as expired",
                        WARNING,
                        [
                            Value(
                                NODEMETRIC,
                                "spec.metricCollectPolicy.reportIntervalSeconds",
                                seconds,
                                "NodeMetric",
                            ),
                            Value(component, field_name, expiration, where),
                        ],
                        fix="nodemetric",
                    ),
                    name,
                )
