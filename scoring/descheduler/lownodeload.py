"""One LowNodeLoad ``Balance`` round on a snapshot, as koord-descheduler computes it.

Upstream: pkg/descheduler/framework/plugins/loadaware/low_node_load.go (``Balance``,
``processOneNodePool``, ``newThresholds``, the early returns) and utilization_util.go
(``getNodeUsage``, ``getNodeThresholds``, ``classifyNodes``, ``evictPodsFromSourceNodes``,
``balancePods``, ``podFitsAnyNodeWithThreshold``, ``evictPods``, ``sortNodesByUsage``) with
pkg/descheduler/utils/sorter/{pod,scorer}.go.

- Usage is ``status.nodeMetric.systemUsage`` plus every ``status.podsMetric`` entry (not
  ``nodeUsage``); prod usage sums the entries of live prod pods; ``pods`` is the pod count.
- A node without a NodeMetric, with a nil ``nodeMetric`` or with an expired one is skipped.
- Allocatable is the ``node.koordinator.sh/raw-allocatable`` list when the node has one (it
  *replaces* ``status.allocatable``: a key it lacks is 0), else ``status.allocatable``.
- Thresholds are ``int64(p * 0.01 * A)`` (millicores for cpu); in deviation mode ``p`` is the
  pool's average usage percentage ± the threshold, clamped to 0..100.
- Pools run in order (the default pool first); a pool with a selector skips the nodes that were
  sources of an earlier pool that reached eviction.

The anomaly detector needs the rounds before this one, which a snapshot does not hold: with
``assume_anomalous`` (the default) every source node is taken as having been above ``high`` long
enough; otherwise ``detectors`` carries their state from earlier rounds (see
:mod:`scoring.descheduler.detector`). The round is a dry run: evictions are recorded with the
accounting upstream does, nothing is evicted.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scoring.descheduler.args import LowNodeLoadArgs, NodePool, Thresholds
from scoring.descheduler.config import MigrationSettings
from scoring.descheduler.detector import Detector, bypassed, rounds_to_anomaly
from scoring.descheduler.evictability import ANNOTATION_EVICTION_COST, filter_reason
from scoring.descheduler.nodefit import fit_reasons, selector_mask
from scoring.object_fields import ObjectError
from scoring.objects import Node, Pod
from scoring.plugins.loadaware import gojson
from scoring.plugins.loadaware.estimator import ANNOTATION_RAW_ALLOCATABLE
from scoring.plugins.loadaware.nodemetric import (
    ParsedMetric,
    amount,
    parse_node_metric,
    seconds_duration,
)
from scoring.plugins.loadaware.priority import BATCH, FREE, LABEL_QOS, MID, PROD, priority_class
from scoring.snapshot import Snapshot

OVER = "over"
UNDER = "under"
NORMAL = "normal"
SKIPPED = "skipped"
ANNOTATION_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

Amounts = dict[str, int]

_PRIORITY_ORDER = {FREE: 1, BATCH: 2, MID: 3, PROD: 4}  # none: 5
_K8S_QOS_ORDER = {"BestEffort": 1, "Burstable": 2, "Guaranteed": 3}
_KOORD_QOS_ORDER = {"BE": 1, "LS": 2, "LSR": 3, "LSE": 4, "SYSTEM": 4}  # none: 5
_KUBE_TO_KOORD_QOS = {"Guaranteed": "LSR", "Burstable": "LS", "BestEffort": "BE"}


@dataclass
class NodeLoad:
    """One node of a pool: what LowNodeLoad measured and decided."""

    name: str
    pool: str
    state: str  # over | under | normal | skipped
    category: str  # source, low, bothLow, prodHigh, prodLow, ignored, or why it was skipped
    usage: Amounts = field(default_factory=dict)
    prod_usage: Amounts = field(default_factory=dict)
    allocatable: Amounts = field(default_factory=dict)
    allocatable_source: str = "status.allocatable"
    low: Amounts = field(default_factory=dict)
    high: Amounts = field(default_factory=dict)
    prod_low: Amounts = field(default_factory=dict)
    prod_high: Amounts = field(default_factory=dict)
    over_resources: list[str] = field(default_factory=list)
    measured: Amounts = field(default_factory=dict)  # usage before the round's accounting
    measured_prod: Amounts = field(default_factory=dict)
    rounds_to_anomaly: int = 0
    anomalous: bool = False

    def percent(self, name: str, usage: Mapping[str, int] | None = None) -> float | None:
        total = self.allocatable.get(name, 0)
        return None if total == 0 else 100.0 * (usage or self.usage).get(name, 0) / total


@dataclass
class Eviction:
    """A pod the round would evict, in order, with the node usage it leaves behind."""

    pod: Pod
    node: str
    pool: str
    prod: bool
    usage: Amounts
    reason: str


@dataclass
class Candidate:
    pod: Pod
    removable: bool
    reason: str | None  # why not removable


@dataclass
class PoolResult:
    name: str
    nodes: list[str]
    resources: list[str]
    low: Thresholds
    high: Thresholds
    prod_low: Thresholds
    prod_high: Thresholds
    use_deviation_thresholds: bool
    outcome: str  # why the pool stopped, or "evicted"
    average: dict[str, float] = field(default_factory=dict)
    candidates: dict[str, list[Candidate]] = field(default_factory=dict)  # source → sorted pods


@dataclass
class RoundResult:
    paused: bool
    nodes: dict[str, NodeLoad]  # the last pool's verdict for each node it saw
    pools: list[PoolResult]
    evictions: list[Eviction]

    @property
    def over(self) -> list[str]:
        return sorted(n for n, load in self.nodes.items() if load.state == OVER)


# -- node usage ---------------------------------------------------------------------------------


def raw_allocatable(node: Node) -> tuple[Amounts, str]:
    """``GetNodeRawAllocatableFromNode``: the annotation's list replaces allocatable."""
    text = node.annotations.get(ANNOTATION_RAW_ALLOCATABLE)
    if text is not None:
        try:
            parsed = gojson.resource_list(gojson.loads(text))
        except gojson.GoJSONError:
            parsed = None
        if parsed is not None:
            return dict(parsed), ANNOTATION_RAW_ALLOCATABLE
    return dict(node.amounts), "status.allocatable"


def _metric(snapshot: Snapshot, node: str, resources: Sequence[str]) -> ParsedMetric | None:
    obj = snapshot.node_metrics.get(node)
    return None if obj is None else parse_node_metric(obj, resources)


def _expired(metric: ParsedMetric, now_ns: int, expiration_seconds: int) -> bool:
    """``isNodeMetricExpired``."""
    if metric.update_ns is None:
        return True
    return expiration_seconds > 0 and now_ns - metric.update_ns >= seconds_duration(
        expiration_seconds
    )


def _pod_usages(
    snapshot: Snapshot, node: str, resources: Sequence[str]
) -> list[tuple[str, str, Amounts]]:
    """Every ``podsMetric`` entry, duplicates included (``getNodeUsage`` sums them all); the
    NodeMetric was checked whole by :func:`_metric` first."""
    obj = snapshot.node_metrics.get(node) or {}
    out = []
    for entry in (obj.get("status") or {}).get("podsMetric") or ():
        if not isinstance(entry, Mapping):
            continue
        listed = (entry.get("podUsage") or {}).get("resources") or {}
        usage = {name: amount(name, listed[name]) if name in listed else 0 for name in resources}
        out.append((str(entry.get("namespace") or ""), str(entry.get("name") or ""), usage))
    return out


# -- thresholds ---------------------------------------------------------------------------------


def new_thresholds(pool: NodePool) -> tuple[Thresholds, Thresholds, Thresholds, Thresholds]:
    """``newThresholds``: every name of the four maps plus memory gets a low (and high)."""
    low, high = dict(pool.low or {}), dict(pool.high or {})
    prod_low, prod_high = dict(pool.prod_low or {}), dict(pool.prod_high or {})
    names = [*low, *high, *prod_low, *prod_high, "memory"]
    fill = 0.0 if pool.use_deviation_thresholds else 100.0
    for name in names:
        if name not in low:
            low[name] = high[name] = fill
        if name not in prod_low:
            prod_low[name] = prod_high[name] = fill
    return low, high, prod_low, prod_high


def _fraction(percent: float, total: int) -> int:
    """``resourceThreshold``: ``int64(float64(p) * 0.01 * float64(A))``."""
    return int(float(percent) * 0.01 * float(total))


def _clamp(percent: float) -> float:
    return min(100.0, max(0.0, percent))


def _average(loads: Sequence[NodeLoad], prod: bool) -> dict[str, float]:
    """``calcAverageResourceUsagePercent``: over every node with usage, zero allocatable skipped
    from the sum but not from the count."""
    sums: dict[str, float] = {}
    for load in loads:
        usage = load.prod_usage if prod else load.usage
        for name, used in usage.items():
            total = load.allocatable.get(name, 0)
            if total:
                sums[name] = sums.get(name, 0.0) + used / total * 100.0
    return {name: total / len(loads) for name, total in sums.items()} if loads else {}


def _node_thresholds(
    load: NodeLoad, pool: PoolResult, avg: dict[str, float], prod_avg: dict[str, float]
) -> None:
    alloc = load.allocatable
    for name in pool.resources:
        if pool.use_deviation_thresholds:
            for low_map, high_map, lo_out, hi_out, average in (
                (pool.low, pool.high, load.low, load.high, avg),
                (pool.prod_low, pool.prod_high, load.prod_low, load.prod_high, prod_avg),
            ):
                if low_map.get(name, 0.0) == 0.0:
                    lo_out[name] = hi_out[name] = alloc.get(name, 0)
                else:
                    mean = average.get(name, 0.0)
                    lo_out[name] = _fraction(_clamp(mean - low_map[name]), alloc.get(name, 0))
                    hi_out[name] = _fraction(
                        _clamp(mean + high_map.get(name, 0.0)), alloc.get(name, 0)
                    )
        else:
            load.low[name] = _fraction(pool.low.get(name, 0.0), alloc.get(name, 0))
            load.high[name] = _fraction(pool.high.get(name, 0.0), alloc.get(name, 0))
            load.prod_low[name] = _fraction(pool.prod_low.get(name, 0.0), alloc.get(name, 0))
            load.prod_high[name] = _fraction(pool.prod_high.get(name, 0.0), alloc.get(name, 0))


def over_resources(usage: Mapping[str, int], thresholds: Mapping[str, int]) -> list[str]:
    """``isNodeOverutilized``: the resources above their threshold."""
    return sorted(n for n, t in thresholds.items() if n in usage and usage[n] > t)


def _under(usage: Mapping[str, int], thresholds: Mapping[str, int]) -> bool:
    return not over_resources(usage, thresholds)


# -- the round ----------------------------------------------------------------------------------


@dataclass
class _Pool:
    """One ``processOneNodePool`` call's working state."""

    result: PoolResult
    loads: dict[str, NodeLoad]
    pods: dict[str, list[Pod]]
    metrics: dict[str, dict[tuple[str, str], Amounts]]


def ready_nodes(snapshot: Snapshot) -> list[Node]:
    """``nodeutil.ReadyNodes``: the Ready condition is True (a node without conditions is ready)."""
    return [node for node in snapshot.nodes if node.ready]


def balance(
    snapshot: Snapshot,
    args: LowNodeLoadArgs,
    migration: MigrationSettings | None = None,
    *,
    now_ns: int,
    nodes: Sequence[Node] | None = None,
    assume_anomalous: bool = True,
    detectors: dict[str, Detector] | None = None,
    prod_detectors: dict[str, Detector] | None = None,
) -> RoundResult:
    """One ``Balance`` call over ``nodes`` (the ready nodes the descheduler's selector keeps)."""
    migration = migration or MigrationSettings()
    candidates = list(nodes if nodes is not None else ready_nodes(snapshot))
    result = RoundResult(args.paused, {}, [], [])
    if args.paused:
        return result
    processed: set[str] = set()
    for pool in args.node_pools:
        state = _process_pool(
            snapshot,
            args,
            migration,
            pool,
            candidates,
            processed,
            now_ns,
            assume_anomalous,
            detectors if detectors is not None else {},
            prod_detectors if prod_detectors is not None else {},
            result.evictions,
        )
        result.pools.append(state.result)
        result.nodes.update(state.loads)
    return result


def _pool_nodes(pool: NodePool, nodes: Sequence[Node], processed: set[str]) -> list[Node]:
    """``filterNodes``: a nil selector keeps every node, processed ones included."""
    if pool.node_selector is None:
        return list(nodes)
    from scoring.podselectors import label_selector

    selector = label_selector(pool.node_selector, "nodeSelector")
    return [n for n in nodes if n.name not in processed and selector.matches(n.labels)]


def _measure(
    snapshot: Snapshot,
    node: Node,
    pool_name: str,
    resources: list[str],
    args: LowNodeLoadArgs,
    now_ns: int,
) -> tuple[NodeLoad, dict[tuple[str, str], Amounts]]:
    """``getNodeUsage`` for one node."""
    allocatable, source = raw_allocatable(node)
    load = NodeLoad(
        node.name, pool_name, SKIPPED, "", allocatable=allocatable, allocatable_source=source
    )
    try:
        metric = _metric(snapshot, node.name, resources)
    except ObjectError as exc:
        load.category = f"NodeMetric unreadable: {exc}"
        return load, {}
    if metric is None:
        load.category = "no NodeMetric"
        return load, {}
    if not metric.has_info:
        load.category = "NodeMetric has no status.nodeMetric"
        return load, {}
    if _expired(metric, now_ns, args.node_metric_expiration_seconds):
        load.category = "NodeMetric expired"
        return load, {}
    pods = snapshot.pods_on_node[snapshot.index[node.name]]
    prod_keys = {(p.namespace, p.name) for p in pods if priority_class(p) == PROD}
    entries = _pod_usages(snapshot, node.name, resources)
    system = dict(zip(resources, metric.system_usage, strict=True))
    load.usage = {n: system[n] + sum(e[2][n] for e in entries) for n in resources}
    load.prod_usage = {
        n: sum(e[2][n] for e in entries if (e[0], e[1]) in prod_keys) for n in resources
    }
    load.usage["pods"] = len(pods)
    load.prod_usage["pods"] = len(prod_keys)
    load.measured, load.measured_prod = dict(load.usage), dict(load.prod_usage)
    return load, {(e[0], e[1]): e[2] for e in entries}


def _process_pool(
    snapshot: Snapshot,
    args: LowNodeLoadArgs,
    migration: MigrationSettings,
    pool: NodePool,
    nodes: Sequence[Node],
    processed: set[str],
    now_ns: int,
    assume_anomalous: bool,
    detectors: dict[str, Detector],
    prod_detectors: dict[str, Detector],
    evictions: list[Eviction],
) -> _Pool:
    low, high, prod_low, prod_high = new_thresholds(pool)
    resources = list(low)
    members = _pool_nodes(pool, nodes, processed)
    result = PoolResult(
        pool.name,
        [n.name for n in members],
        resources,
        low,
        high,
        prod_low,
        prod_high,
        pool.use_deviation_thresholds,
        "",
    )
    state = _Pool(result, {}, {}, {})
    measured: list[NodeLoad] = []
    for node in members:
        load, metrics = _measure(snapshot, node, pool.name, resources, args, now_ns)
        state.loads[node.name] = load
        if load.state == SKIPPED and load.category:
            continue
        measured.append(load)
        state.pods[node.name] = list(snapshot.pods_on_node[snapshot.index[node.name]])
        state.metrics[node.name] = metrics
    if not members:
        result.outcome = "no nodes in the pool"
        return state
    avg = _average(measured, False) if pool.use_deviation_thresholds else {}
    prod_avg = _average(measured, True) if pool.use_deviation_thresholds else {}
    result.average = avg
    groups = _classify(snapshot, measured, result, avg, prod_avg, pool)
    result.outcome = _run(
        snapshot,
        args,
        migration,
        pool,
        state,
        groups,
        processed,
        now_ns,
        assume_anomalous,
        detectors,
        prod_detectors,
        evictions,
    )
    return state


def _classify(
    snapshot: Snapshot,
    loads: list[NodeLoad],
    pool: PoolResult,
    avg: dict[str, float],
    prod_avg: dict[str, float],
    args_pool: NodePool,
) -> dict[str, list[NodeLoad]]:
    """``classifyNodes``; an unschedulable node is never under ``low``."""
    groups: dict[str, list[NodeLoad]] = {
        k: [] for k in ("low", "source", "prodLow", "prodHigh", "bothLow")
    }
    for load in loads:
        _node_thresholds(load, pool, avg, prod_avg)
        load.rounds_to_anomaly = rounds_to_anomaly(args_pool.anomaly)
        schedulable = not bool(snapshot.unschedulable[snapshot.index[load.name]])
        over = over_resources(load.usage, load.high)
        load.over_resources = over
        prod_over = bool(over_resources(load.prod_usage, load.prod_high))
        prod_under = schedulable and _under(load.prod_usage, load.prod_low)
        if schedulable and _under(load.usage, load.low):
            load.state = UNDER
            load.category = "prodHigh" if prod_over else "bothLow" if prod_under else "low"
        elif over:
            load.state, load.category = OVER, "source"
        else:
            load.state = NORMAL
            load.category = "prodHigh" if prod_over else "prodLow" if prod_under else "ignored"
        if load.category in groups:
            groups[load.category].append(load)
    return groups


def _anomalous(
    loads: list[NodeLoad], pool: NodePool, detectors: dict[str, Detector], assume: bool, now_ns: int
) -> list[NodeLoad]:
    """``filterRealAbnormalNodes``."""
    if bypassed(pool.anomaly) or assume:
        for load in loads:
            load.anomalous = True
        return list(loads)
    out = []
    for load in loads:
        detector = detectors.setdefault(load.name, Detector(pool.anomaly))
        if detector.mark(False, now_ns) == "Anomaly":
            load.anomalous = True
            out.append(load)
    return out


def _run(
    snapshot: Snapshot,
    args: LowNodeLoadArgs,
    migration: MigrationSettings,
    pool: NodePool,
    state: _Pool,
    groups: dict[str, list[NodeLoad]],
    processed: set[str],
    now_ns: int,
    assume: bool,
    detectors: dict[str, Detector],
    prod_detectors: dict[str, Detector],
    evictions: list[Eviction],
) -> str:
    """The early returns of ``processOneNodePool``, then the evictions."""
    if not groups["source"] and not groups["prodHigh"]:
        return "no node is above its high thresholds"
    abnormal = _anomalous(groups["source"], pool, detectors, assume, now_ns)
    abnormal_prod = _anomalous(groups["prodHigh"], pool, prod_detectors, assume, now_ns)
    if not abnormal and not abnormal_prod:
        return "no node above its high thresholds is anomalous yet"
    if not groups["low"] and not groups["prodLow"] and not groups["bothLow"]:
        return "no node is under its low thresholds"
    for load in groups["low"] + groups["bothLow"]:
        if load.name in detectors:
            detectors[load.name].reset(now_ns)
    for load in groups["prodLow"]:
        if load.name in prod_detectors:
            prod_detectors[load.name].reset(now_ns)
    lows = len(groups["low"]) + len(groups["prodLow"]) + len(groups["bothLow"])
    if lows <= args.number_of_nodes:
        return (
            f"{lows} node(s) under low thresholds, "
            f"not more than numberOfNodes ({args.number_of_nodes})"
        )
    if lows == len(state.result.nodes):
        return "every node is under its low thresholds"
    weights = dict(pool.resource_weights)
    abnormal.sort(key=lambda load: (-_node_score(load.usage, load.allocatable, weights), load.name))
    abnormal_prod.sort(
        key=lambda load: (-_node_score(load.prod_usage, load.allocatable, weights), load.name)
    )
    _evict_from_sources(
        snapshot, args, migration, pool, state, abnormal, abnormal_prod, groups, evictions
    )
    for loads, kept in ((abnormal, detectors), (abnormal_prod, prod_detectors)):
        for load in loads:  # tryMarkNodesAsNormal
            if load.name in kept:
                kept[load.name].mark(True, now_ns)
    for load in state.loads.values():
        if load.state == OVER:
            processed.add(load.name)
    return "evicted"


# -- scoring and sorting ------------------------------------------------------------------------


def _node_score(
    usage: Mapping[str, int], allocatable: Mapping[str, int], weights: Mapping[str, int]
) -> int:
    """``ResourceUsageScorer`` (sorter/scorer.go): weighted ``⌊1000·min(u,A)/A⌋``."""
    total = weight_sum = 0
    for name, used in usage.items():
        weight = weights.get(name, 0)
        capacity = allocatable.get(name, 0)
        score = 0 if capacity == 0 else min(used, capacity) * 1000 // capacity
        total += score * weight
        weight_sum += weight
    return 0 if weight_sum == 0 else total // weight_sum


def _pod_fit_score(
    usage: Mapping[str, int], excess: Mapping[str, int], weights: Mapping[str, int]
) -> float:
    """``ResourceUsageScorerPod`` over the resources above ``high``: ratio, or 1 + 1/ratio."""
    total = 0.0
    weight_sum = 0
    for name, used in usage.items():
        weight = weights.get(name, 0)
        capacity = excess.get(name, 0)
        score = 0.0
        if capacity != 0:
            ratio = used / capacity
            score = 1 / ratio + 1 if ratio >= 1 else ratio
        total += score * weight
        weight_sum += weight
    return 0.0 if weight_sum == 0 else total / weight_sum


def _int_annotation(pod: Pod, key: str) -> int:
    try:
        value = int(pod.annotations.get(key, "0"))
    except ValueError:
        return 0
    return value if -(2**31) <= value < 2**31 else 0


def koord_qos(pod: Pod) -> str:
    """``GetPodQoSClassWithDefault``."""
    label = pod.labels.get(LABEL_QOS, "")
    if label in _KOORD_QOS_ORDER:
        return label
    return _KUBE_TO_KOORD_QOS.get(pod.qos_class, "")


def _compare(a: tuple[float, ...] | float | str, b: tuple[float, ...] | float | str) -> int:
    return int(a > b) - int(a < b)  # type: ignore[operator]


def _rank(pod: Pod) -> tuple[float, ...]:
    """The sorter's first comparators, each ascending: koord priority class, priority, k8s QoS,
    koord QoS, deletion cost, eviction cost."""
    return (
        _PRIORITY_ORDER.get(priority_class(pod), 5),
        pod.priority or 0,
        _K8S_QOS_ORDER.get(pod.qos_class, 0),
        _KOORD_QOS_ORDER.get(koord_qos(pod), 5),
        _int_annotation(pod, ANNOTATION_DELETION_COST),
        _int_annotation(pod, ANNOTATION_EVICTION_COST),
    )


def pod_order(
    pods: list[Pod],
    metrics: Mapping[tuple[str, str], Amounts],
    excess: Mapping[str, int],
    weights: Mapping[str, int],
) -> list[Pod]:
    """``SortPodsByUsage``: the pods evicted first come first."""
    fit_weights = {name: weights.get(name, 0) for name in excess}
    ranks = {id(pod): _rank(pod) for pod in pods}

    def compare(p1: Pod, p2: Pod) -> int:
        order = _compare(ranks[id(p1)], ranks[id(p2)])
        if order:
            return order
        m1, m2 = metrics.get((p1.namespace, p1.name)), metrics.get((p2.namespace, p2.name))
        if m1 is None or m2 is None:
            order = _compare(m1 is None, m2 is None)  # pods without metrics last
        else:
            order = -_compare(
                _pod_fit_score(m1, excess, fit_weights), _pod_fit_score(m2, excess, fit_weights)
            )
        if order:
            return order
        return -_compare(_created(p1), _created(p2))  # newest first

    return sorted(pods, key=functools.cmp_to_key(compare))


def _created(pod: Pod) -> str:
    return pod.creation_timestamp


# -- evictions ----------------------------------------------------------------------------------


def _headroom(targets: list[NodeLoad], resources: list[str], prod: bool) -> Amounts:
    """``targetAvailableUsage``: Σ (high − usage) over the targets."""
    out = dict.fromkeys(resources, 0)
    for load in targets:
        for name in resources:
            if prod:
                out[name] += load.prod_high.get(name, 0) - load.prod_usage.get(name, 0)
            else:
                out[name] += load.high.get(name, 0) - load.usage.get(name, 0)
    return out


def _evict_from_sources(
    snapshot: Snapshot,
    args: LowNodeLoadArgs,
    migration: MigrationSettings,
    pool: NodePool,
    state: _Pool,
    sources: list[NodeLoad],
    prod_sources: list[NodeLoad],
    groups: dict[str, list[NodeLoad]],
    evictions: list[Eviction],
) -> None:
    """``evictPodsFromSourceNodes``: the non-prod phase, then the prod phase."""
    resources = state.result.resources
    total = _headroom(groups["low"], resources, False)
    prod_total = _headroom(groups["prodLow"], resources, True)
    both = _headroom(groups["bothLow"], resources, False)
    prod_both = _headroom(groups["bothLow"], resources, True)
    budget = {n: total[n] + both[n] for n in resources}
    _balance_pods(
        snapshot,
        args,
        migration,
        pool,
        state,
        sources,
        groups["low"] + groups["bothLow"],
        budget,
        False,
        evictions,
    )
    for name in resources:
        both[name] = min(both[name], budget[name])
    prod_budget = {n: prod_total[n] + min(prod_both[n], both[n]) for n in resources}
    _balance_pods(
        snapshot,
        args,
        migration,
        pool,
        state,
        prod_sources,
        groups["prodLow"] + groups["bothLow"],
        prod_budget,
        True,
        evictions,
    )


def _fits_target(
    snapshot: Snapshot, pod: Pod, usage: Amounts, targets: list[NodeLoad], prod: bool
) -> bool:
    """``podFitsAnyNodeWithThreshold``: the first fitting target keeps the pod's usage added."""
    selector = selector_mask(pod, snapshot)
    for target in targets:
        index = snapshot.index[target.name]
        if fit_reasons(pod, snapshot, index, bool(selector[index])):
            continue
        current = target.prod_usage if prod else target.usage
        limits = target.prod_high if prod else target.high
        if any(current.get(n, 0) + usage.get(n, 0) > t for n, t in limits.items() if n in current):
            continue
        for name in limits:
            if name in current:
                current[name] += usage.get(name, 0)
        return True
    return False


def _balance_pods(
    snapshot: Snapshot,
    args: LowNodeLoadArgs,
    migration: MigrationSettings,
    pool: NodePool,
    state: _Pool,
    sources: list[NodeLoad],
    targets: list[NodeLoad],
    budget: Amounts,
    prod: bool,
    evictions: list[Eviction],
) -> None:
    if not targets:
        return
    for source in sources:
        pods = state.pods.get(source.name, [])
        if prod:
            pods = [p for p in pods if priority_class(p) == PROD]
        metrics = state.metrics.get(source.name, {})
        listed: list[Candidate] = []
        removable: list[Pod] = []
        for pod in pods:
            reason = filter_reason(pod, args, migration)
            if reason is None and args.node_fit:
                usage = metrics.get((pod.namespace, pod.name))
                if usage is None:
                    reason = "no podsMetric entry"
                elif not _fits_target(snapshot, pod, usage, targets, prod):
                    reason = "fits no target node under its high thresholds"
            listed.append(Candidate(pod, reason is None, reason))
            if reason is None:
                removable.append(pod)
        usage_now = source.prod_usage if prod else source.usage
        limits = source.prod_high if prod else source.high
        excess = {n: usage_now[n] - limits[n] for n in over_resources(usage_now, limits)}
        ordered = pod_order(removable, metrics, excess, pool.resource_weights)
        state.result.candidates[source.name] = [
            *(c for p in ordered for c in listed if c.pod is p),
            *(c for c in listed if not c.removable),
        ]
        thresholds = state.result.prod_high if prod else state.result.high
        _evict_pods(args, migration, source, ordered, metrics, budget, prod, thresholds, evictions)


def _evict_pods(
    args: LowNodeLoadArgs,
    migration: MigrationSettings,
    source: NodeLoad,
    pods: list[Pod],
    metrics: Mapping[tuple[str, str], Amounts],
    budget: Amounts,
    prod: bool,
    thresholds: Thresholds,
    evictions: list[Eviction],
) -> None:
    """``evictPods``: stop once the node is not over or a budget is spent."""
    usage = source.prod_usage if prod else source.usage
    limits = source.prod_high if prod else source.high
    for pod in pods:
        over = over_resources(usage, limits)
        if not over or any(amount <= 0 for amount in budget.values()):
            return
        if filter_reason(pod, args, migration) is not None:
            continue
        reason = "node is overutilized, " + ", ".join(
            f"{name} usage({source.percent(name, usage) or 0.0:.2f}%)"
            f">threshold({thresholds.get(name, 0.0):.2f}%)"
            for name in over
        )
        pod_usage = metrics.get((pod.namespace, pod.name))
        if pod_usage is None:
            evictions.append(Eviction(pod, source.name, source.pool, prod, dict(usage), reason))
            continue
        for name in budget:
            budget[name] -= pod_usage.get(name, 0)
            if name in source.usage:
                source.usage[name] -= pod_usage.get(name, 0)
            if prod and name in source.prod_usage:
                source.prod_usage[name] -= pod_usage.get(name, 0)
        evictions.append(Eviction(pod, source.name, source.pool, prod, dict(usage), reason))
