"""Plugin explanations (``details.<Plugin>`` of the engine contract) laid out for people."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from policy.web import format as fmt
from scoring import LOADAWARE

IMAGE_LOCALITY = "ImageLocality"
TOPOLOGY_SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
NODE_RESOURCES_FIT = "NodeResourcesFit"
# Plugins whose explanation has its own card on the decision node page.
OWN_CARDS = frozenset(
    {LOADAWARE, IMAGE_LOCALITY, TOPOLOGY_SPREAD, INTER_POD_AFFINITY, NODE_RESOURCES_FIT}
)


@dataclass(frozen=True)
class UsageLine:
    """One resource of LoadAware's usage check: the arithmetic behind the verdict."""

    resource: str
    allocatable: str
    measured: str
    existing: str
    incoming: str
    estimated: str
    measured_percent: str
    added_percent: str
    usage_percent: str
    threshold: str
    checked: bool
    exceeds: bool


def loadaware_lines(detail: Mapping[str, Any] | None) -> list[UsageLine]:
    """The usage check of a LoadAware explanation (empty when the check did not run)."""
    if not detail:
        return []
    check = detail.get("filter") or {}
    lines = []
    for name, r in (check.get("resources") or {}).items():
        usage, seen = r.get("usagePercent"), r.get("measuredPercent")
        added = None if usage is None or seen is None else usage - seen
        lines.append(
            UsageLine(
                resource=name,
                allocatable=fmt.amount(name, r.get("allocatable")),
                measured=fmt.amount(name, r.get("measured")),
                existing=fmt.amount(name, r.get("existingPodsEstimated")),
                incoming=fmt.amount(name, r.get("incomingEstimated")),
                estimated=fmt.amount(name, r.get("estimated")),
                measured_percent=fmt.percent(seen),
                added_percent=fmt.percent(added),
                usage_percent=fmt.percent(usage),
                threshold=fmt.percent(r.get("threshold")) if r.get("threshold") else "not checked",
                checked=bool(r.get("checked")),
                exceeds=bool(r.get("exceeds")),
            )
        )
    return lines


def estimate_text(estimate: Mapping[str, Any] | None) -> str:
    """LoadAware's estimate of a pod, e.g. "cpu 5.1 cores, memory 5.6 Gi"."""
    parts = []
    for name, value in (estimate or {}).items():
        unit = " cores" if name == "cpu" else ""
        parts.append(f"{name} {fmt.amount(name, value)}{unit}")
    return ", ".join(parts) or "nothing"


def loadaware_summary(details: Mapping[str, Any] | None) -> str:
    """The one-line verdict, e.g. "cpu 71% (58% measured + 13% estimated) > 65% threshold from
    node annotation" ("" when the node has no LoadAware explanation)."""
    detail = (details or {}).get(LOADAWARE) or {}
    return str(detail.get("summary") or "")


def metric_line(metric: Mapping[str, Any] | None) -> str:
    """The NodeMetric's state in words."""
    if not metric or not metric.get("present"):
        return "no NodeMetric: the node is not load-aware"
    age = fmt.age(metric.get("ageSeconds"))
    expiry = metric.get("expirationSeconds")
    text = f"updated {age} ago ({metric.get('updateTime') or 'no updateTime'})"
    if expiry:
        text += f"; expires after {expiry} s"
    if metric.get("expired"):
        text += " — expired"
    if not metric.get("hasUsage", True):
        text += "; reports no usage"
    return text


def other_details(details: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """Every plugin's explanation except those shown as their own card (``OWN_CARDS``)."""
    return [(name, value) for name, value in (details or {}).items() if name not in OWN_CARDS]


@dataclass(frozen=True)
class ImageLine:
    """One container of the pod under ImageLocality: its image as this node holds it."""

    container: str
    image: str
    on_node: bool
    size: str
    nodes: str
    spread: str
    scaled: str


@dataclass(frozen=True)
class ImageLocalityView:
    lines: list[ImageLine]
    total: str
    max_threshold: str
    score: int
    node_images: int


def imagelocality_view(detail: Mapping[str, Any] | None) -> ImageLocalityView | None:
    """The pod's images on this node and the arithmetic from sum to score (None without)."""
    if not detail:
        return None
    total_nodes = detail.get("totalNodes")
    lines = []
    for c in detail.get("containers") or []:
        held = "sizeBytes" in c
        lines.append(
            ImageLine(
                container=str(c.get("container", "")),
                image=str(c.get("image", "")),
                on_node=held,
                size=fmt.binary(c.get("sizeBytes")),
                nodes=f"{c.get('nodesWithImage')} of {total_nodes}" if held else "—",
                spread=fmt.percent(100 * c["spread"]) if held else "—",
                scaled=fmt.binary(c.get("scaled")),
            )
        )
    return ImageLocalityView(
        lines=lines,
        total=fmt.binary(detail.get("sumBeforeScaling")),
        max_threshold=fmt.binary(detail.get("maxThreshold")),
        score=int(detail.get("score") or 0),
        node_images=len(detail.get("nodeImages") or []),
    )


@dataclass(frozen=True)
class DomainLine:
    """One constraint or term on one node: the topology domain, what matched there, and what
    that means (a skew against its limit, a score contribution, a verdict)."""

    rule: str  # the constraint or term, as the plugin describes it
    kind: str  # DoNotSchedule, ScheduleAnyway, required anti-affinity, preferred affinity …
    domain: str
    matching: str
    meaning: str
    pods: list[str]


def _pods(entry: Mapping[str, Any]) -> list[str]:
    return [str(p) for p in entry.get("matchedPods") or entry.get("pods") or []]


def spread_view(detail: Mapping[str, Any] | None) -> list[DomainLine] | None:
    """PodTopologySpread on this node: each constraint's domain, count and skew (or score
    contribution), and the pods counted (None when the plugin said nothing)."""
    if not detail:
        return None
    lines = []
    for c in detail.get("hardConstraints") or []:
        own = " + this pod" if c.get("selfMatch") else ""
        skew, limit = c.get("skew"), c.get("maxSkew")
        verdict = "within" if skew is not None and limit is not None and skew <= limit else "over"
        lines.append(
            DomainLine(
                rule=f"{c.get('topologyKey')}: {c.get('selector')}",
                kind="DoNotSchedule",
                domain=str(c.get("domain") or "— (node lacks the key)"),
                matching=f"{c.get('matchingPods', 0)}{own}",
                meaning=f"skew {skew} ({verdict} maxSkew {limit}; global minimum "
                f"{c.get('globalMinimum')} over {c.get('domains')} domain(s))",
                pods=_pods(c),
            )
        )
    for c in detail.get("softConstraints") or []:
        lines.append(
            DomainLine(
                rule=f"{c.get('topologyKey')}: {c.get('selector')}",
                kind="ScheduleAnyway",
                domain=str(c.get("domain") or "—"),
                matching=str(c.get("matchingPods", 0)),
                meaning=f"adds {float(c.get('contribution') or 0):.2f} to the raw score "
                f"(weight {float(c.get('weight') or 0):.2f}: fewer is better)",
                pods=_pods(c),
            )
        )
    return lines


_AFFINITY_KINDS = (
    ("requiredAffinityTerms", "required affinity", "needs a matching pod in the domain"),
    ("requiredAntiAffinityTerms", "required anti-affinity", "needs no matching pod there"),
)


def affinity_view(detail: Mapping[str, Any] | None) -> list[DomainLine] | None:
    """InterPodAffinity on this node: each of the pod's terms (and existing pods' terms that
    reach it), the domain and the pods matched there."""
    if not detail:
        return None
    lines = []
    for key, kind, rule in _AFFINITY_KINDS:
        for t in detail.get(key) or []:
            lines.append(
                DomainLine(
                    rule=str(t.get("term", "")),
                    kind=kind,
                    domain=str(t.get("domain") or "— (node lacks the key)"),
                    matching=str(t.get("matchingPods", 0)),
                    meaning=rule,
                    pods=_pods(t),
                )
            )
    for t in detail.get("existingAntiAffinity") or []:
        lines.append(
            DomainLine(
                rule=str(t.get("term", "")),
                kind="existing pods' required anti-affinity",
                domain=str(t.get("domain") or "—"),
                matching=str(len(t.get("pods") or [])),
                meaning="those pods refuse this pod in their domain",
                pods=_pods(t),
            )
        )
    for t in detail.get("scoreTerms") or []:
        weight = int(t.get("weight") or 0)
        source = "this pod's" if t.get("source") == "incoming" else "existing pods'"
        lines.append(
            DomainLine(
                rule=str(t.get("term", "")),
                kind=f"{source} preferred {'anti-' if weight < 0 else ''}affinity",
                domain=str(t.get("domain") or "—"),
                matching=str(t.get("matchingPods", len(t.get("pods") or []))),
                meaning=f"weight {weight:+d} per matching pod",
                pods=_pods(t),
            )
        )
    return lines


# The number of a score the shape's points are given in (0–10) times this is the node score.
_SHAPE_SCALE = 10


@dataclass(frozen=True)
class FitResource:
    """One resource as NodeResourcesFit's filter checks it: the pod's request plus what the
    node's pods already request, against allocatable."""

    resource: str
    unit: str
    pod: str
    on_node: str
    requested: str  # pod + on node
    allocatable: str
    free: str  # allocatable − on node: what the pod may take
    percent: str  # requested / allocatable
    checked: bool  # the filter checks only what the pod requests (and always the pod count)
    fits: bool


@dataclass(frozen=True)
class FitScoreLine:
    """One configured resource of the scoring strategy, its arithmetic with the numbers in."""

    resource: str
    weight: int
    requested: str
    allocatable: str
    formula: str  # e.g. "(16 − 5.1) × 100 / 16 = 68"
    score: int
    counted: bool
    note: str  # why the resource is left out, or the non-zero default it was scored with


@dataclass(frozen=True)
class FitView:
    strategy: str
    formula: str  # the strategy's per-resource formula in words
    resources: list[FitResource]
    lines: list[FitScoreLine]
    average: str  # the weighted average with the numbers in, "" without a counted resource
    shape: list[str]  # RequestedToCapacityRatio's points, "utilization → score"
    raw: int | None  # the plugin's raw score on this node (None: the node was not scored)


STRATEGY_FORMULAS = {
    "LeastAllocated": "(allocatable − requested) × 100 / allocatable: free room scores high",
    "MostAllocated": "requested × 100 / allocatable (requested capped at allocatable): "
    "fuller nodes score high",
    "RequestedToCapacityRatio": "the shape's piecewise-linear function of utilization "
    "(requested × 100 / allocatable), the shape's scores × 10",
}


def _in_units(resource: str, value: int | None) -> str:
    """``fmt.amount`` with the unit people expect: "5.1 cores", "8 Gi", "110"."""
    text = fmt.amount(resource, value)
    unit = fmt.unit(resource)
    return f"{text} {unit}" if unit and value is not None else text


def _fit_resources(rows: Mapping[str, Any]) -> list[FitResource]:
    out = []
    for name, r in rows.items():
        allocatable, on_node, pod = (
            int(r.get("allocatable") or 0),
            int(r.get("requested") or 0),
            int(r.get("pod") or 0),
        )
        if name != "pods" and not pod and name not in ("cpu", "memory"):
            continue  # ephemeral storage the pod does not ask for: not checked
        checked = name == "pods" or pod > 0
        out.append(
            FitResource(
                resource=name,
                unit=fmt.unit(name),
                pod=fmt.amount(name, pod),
                on_node=fmt.amount(name, on_node),
                requested=fmt.amount(name, on_node + pod),
                allocatable=fmt.amount(name, allocatable),
                free=fmt.amount(name, allocatable - on_node),
                percent=fmt.percent(fmt.ratio(on_node + pod, allocatable)),
                checked=checked,
                fits=not checked or on_node + pod <= allocatable,
            )
        )
    return out


def _shape_value(points: list[tuple[int, int]], utilization: int, score: int) -> str:
    """How the shape gives ``score`` at ``utilization``: the segment and its interpolation."""
    for i, (point, value) in enumerate(points):
        if utilization <= point:
            if i == 0:
                return f"f({utilization}) = {value}"
            (p0, s0) = points[i - 1]
            return (
                f"f({utilization}) = {s0} + ({value} − {s0}) × ({utilization} − {p0}) / "
                f"({point} − {p0}) = {score}"
            )
    return f"f({utilization}) = {points[-1][1]} (past the last point)"


def _score_line(
    strategy: str, r: Mapping[str, Any], rows: Mapping[str, Any], points: list[tuple[int, int]]
) -> FitScoreLine:
    name = str(r.get("name"))
    a, q = int(r.get("allocatable") or 0), int(r.get("requested") or 0)
    score, counted = int(r.get("score") or 0), bool(r.get("counted"))
    alloc, req = fmt.amount(name, a), fmt.amount(name, q)
    note = ""
    if not a:
        note = "left out: the node has none, or the pod does not request it"
        formula = "—"
    elif strategy == "MostAllocated":
        capped = "min(" + req + ", " + alloc + ")" if q > a else req
        formula = f"{capped} × 100 / {alloc} = {score}"
    elif strategy == "RequestedToCapacityRatio":
        utilization = int(r.get("utilization") or 0)  # the engine's, as it scored it
        formula = f"{req} × 100 / {alloc} = {utilization}%; " + _shape_value(
            points, utilization, score
        )
        if not counted:
            note = "left out: a score of 0 does not count in the average"
    elif q > a:
        formula = f"{req} requested > {alloc} allocatable: 0"
    else:
        formula = f"({alloc} − {req}) × 100 / {alloc} = {score}"
    row = rows.get(name) or {}
    if "scoredPod" in row and (
        row.get("scoredPod") != row.get("pod") or row.get("scoredRequested") != row.get("requested")
    ):
        note = (
            f"scored with non-zero requests: containers without a {name} request count as "
            f"{'100m' if name == 'cpu' else '200 Mi'}"
        )
    return FitScoreLine(
        resource=name,
        weight=int(r.get("weight") or 0),
        requested=_in_units(name, q),
        allocatable=_in_units(name, a),
        formula=formula,
        score=score,
        counted=counted,
        note=note,
    )


def _average(strategy: str, lines: list[FitScoreLine], raw: int | None) -> str:
    """The weighted average of the counted resources' scores, ending in the engine's raw score:
    truncated, as Go's integer division, but rounded half away from zero under
    RequestedToCapacityRatio (math.Round)."""
    counted = [line for line in lines if line.counted]
    weights = sum(line.weight for line in counted)
    if not counted or not weights or raw is None:
        return ""
    terms = " + ".join(f"{line.score} × {line.weight}" for line in counted)
    if strategy == "RequestedToCapacityRatio":
        return f"round(({terms}) / {weights}) = {raw}"
    return f"({terms}) / {weights} = {raw}"


def fit_view(detail: Mapping[str, Any] | None, raw: int | None = None) -> FitView | None:
    """NodeResourcesFit on one node: what the filter compares per resource, in cores and Gi,
    and the scoring strategy's arithmetic with the node's numbers (None without)."""
    if not detail:
        return None
    strategy = str(detail.get("strategy") or "LeastAllocated")
    rows: Mapping[str, Any] = detail.get("resources") or {}
    points = [
        (int(p.get("utilization") or 0), int(p.get("score") or 0) * _SHAPE_SCALE)
        for p in detail.get("shape") or []
    ]
    lines = [_score_line(strategy, r, rows, points) for r in detail.get("scored") or []]
    return FitView(
        strategy=strategy,
        formula=STRATEGY_FORMULAS.get(strategy, strategy),
        resources=_fit_resources(rows),
        lines=lines,
        average=_average(strategy, lines, raw),
        shape=[f"{u}% → {s}" for u, s in points],
        raw=raw,
    )
