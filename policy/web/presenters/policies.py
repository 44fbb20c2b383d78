"""What the policy editors show: defaults, rendered outputs, diffs and history entries.

The rendered outputs are those of :mod:`policy.policies.rendering` (the same text the API's
render endpoints return and the gateway writes): the KubeSchedulerConfiguration YAML, the
node-threshold annotation per node, the colocation-config JSON.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import yaml
from django.forms.utils import pretty_name

from policy.accounts.models import PolicyChange
from policy.clusters.gateway.apply import KEEP, LEAVE
from policy.clusters.models import Cluster
from policy.policies import rendering
from policy.policies.documents import AGGREGATED_FIELDS, ARGS_FIELDS, build_document
from policy.policies.models import NodeThresholdPolicy, SchedulerConfiguration
from policy.policies.services import PolicyInvalid
from policy.sync.thresholds_in_force import NodeThresholdInForce, thresholds_in_force
from policy.web import format as fmt
from scoring import ANNOTATION_USAGE_THRESHOLDS
from scoring import default_loadaware_args as default_args

# Koordinator's LoadAware proposal, per v1 field: shown under the fields of the args editor.
PROPOSAL: dict[str, str] = {
    "nodeMetricExpirationSeconds": "The NodeMetric expiration in seconds. When NodeMetrics "
    "expired, the node is considered abnormal. Default is 180 seconds.",
    "enableScheduleWhenNodeMetricsExpired": "Whether nodes with expired nodeMetrics are "
    "allowed to schedule pods.",
    "resourceWeights": "The weights of resources. The weights of CPU and Memory are both 1 by "
    "default.",
    "dominantResourceWeight": "The weight of the dominant resource: the resource with the "
    "maximum utilization (Dominant Resource Fairness).",
    "usageThresholds": "The resource utilization threshold; the default for CPU is 65%, for "
    "memory 95%.",
    "prodUsageThresholds": "The resource utilization threshold of prod pods compared to the "
    "whole machine. Not enabled by default.",
    "prodUsageIncludeSys": "Whether to include system usage (not used by pods) when summing up "
    "current usage for prod pods.",
    "scoreAccordingProdUsage": "Whether to score according to the utilization of prod pods.",
    "estimatedScalingFactors": "The factor when estimating resource usage. The default for CPU "
    "is 85%, for memory 70%.",
    "estimatedSecondsAfterPodScheduled": "The forced estimation duration after the pod "
    "condition PodScheduled turns True, in seconds.",
    "estimatedSecondsAfterInitialized": "The forced estimation duration after the pod condition "
    "Initialized turns True, in seconds.",
    "allowCustomizeEstimation": "Whether to allow reading estimation args from the pod's metadata.",
    "supportedResources": "Extra resource names used only in custom node annotations; cpu, "
    "memory and every resource in the args are supported by default.",
}


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def loadaware_defaults() -> dict[str, str]:
    """Model field -> Koordinator's default, as text ("" where there is none)."""
    defaults = default_args({})
    out: dict[str, str] = {}
    for field, v1 in ARGS_FIELDS.items():
        out[field] = _text(defaults[v1]) if v1 in defaults else ""
    out["dominant_resource_weight"] = "0"
    out["prod_usage_include_sys"] = "false"
    out["score_according_prod_usage"] = "false"
    out["allow_customize_estimation"] = "false"
    for field in AGGREGATED_FIELDS:
        out.setdefault(field, "")
    return out


def proposal_help() -> dict[str, str]:
    """Model field -> the proposal's sentence about it."""
    v1 = {**ARGS_FIELDS}
    return {field: PROPOSAL[name] for field, name in v1.items() if name in PROPOSAL}


# -- rendered outputs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """One rendered output: its text (empty: nothing written) and a problem, if any;
    ``effective``: what the scheduler runs with it (defaults filled in), shown, never written."""

    title: str
    text: str
    problem: str = ""
    effective: str = ""


def render_configuration(cluster: Cluster) -> Rendered:
    title = "KubeSchedulerConfiguration (YAML written to the scheduler ConfigMap)"
    configuration = SchedulerConfiguration.objects.filter(cluster=cluster).first()
    if configuration is None:
        return Rendered(title, "", "No scheduler configuration: kube-scheduler's defaults apply.")
    try:
        return Rendered(
            title,
            rendering.render_scheduler_configuration(configuration),
            effective=rendering.effective_configuration(configuration),
        )
    except PolicyInvalid as exc:
        return Rendered(title, "", f"The stored configuration is invalid: {exc}")


def render_thresholds(cluster: Cluster, at: datetime | None = None) -> Rendered:
    """The annotation per node now, or at ``at`` (a preview "at 02:00")."""
    moment = "now" if at is None else "then"
    title = f"{ANNOTATION_USAGE_THRESHOLDS} per node ({moment}, newest snapshot)"
    try:
        _, local, rows = thresholds_in_force(cluster, at)
    except rendering.NoSnapshot as exc:
        return Rendered(title, "", str(exc))
    lines = [_threshold_line(row) for row in rows]
    return Rendered(f"{title}, at {local:%H:%M} {cluster.timezone}", "\n".join(lines) + "\n")


def _threshold_line(row: NodeThresholdInForce) -> str:
    """What schedboard writes to the node; a node whose annotation is someone else's says so."""
    value = row.desired if row.desired is not None else "(none)"
    if row.action == LEAVE:
        return f"{row.node}: left alone, set outside schedboard: {row.current} (would be {value})"
    return f"{row.node}: {value}"


@dataclass(frozen=True)
class ThresholdGroup:
    """Nodes that end up alike: the annotation governing them (``value``; "(none)": the args),
    the policy it comes from ("" when none, or when it is someone else's), and ``status``
    (in force, after a push, or left alone and why), from :mod:`policy.sync.thresholds_in_force`."""

    value: str
    by: str
    status: str
    action: str
    nodes: list[str]


@dataclass(frozen=True)
class ThresholdPreview:
    """What a node threshold policy does at one moment: the nodes it targets, whether its
    window is open then, and which annotation governs each of those nodes then (from this
    policy, another with a higher priority, or someone else's that a push leaves alone),
    grouped."""

    nodes: list[str]
    active: bool
    local: datetime
    when: str  # "now", "at 02:00", "while its time window is open (22:00–06:00), at 22:00"
    groups: list[ThresholdGroup]
    no_match: str  # a warning when it targets no node

    @property
    def clock(self) -> str:
        """The wall-clock time in the cluster's time zone (a template's ``time`` filter would
        show it in the server's)."""
        return f"{self.local:%H:%M}"


def _group_key(row: NodeThresholdInForce) -> tuple[str, str, str, str]:
    """(value, policy, status, action): what governs the node once a push has run."""
    if row.action == LEAVE:
        return (row.current or "(none)", "", row.reason, row.action)
    by = row.policy.name if row.policy else ""
    status = "after a push" if row.push_writes else "in force"
    if row.action == KEEP and row.foreign:
        status = "in force (set outside schedboard, same value)"
    return (row.desired or "(none)", by, status, row.action)


def no_match_warning(policy: NodeThresholdPolicy) -> str:
    if policy.node_selector is not None:
        return (
            f"The node selector {fmt.label_selector(policy.node_selector)} matches no node of "
            "the newest snapshot: this policy sets no annotation."
        )
    return (
        f"None of the node names ({fmt.names(policy.node_names)}) is a node of the newest "
        "snapshot: this policy sets no annotation."
    )


def threshold_preview(
    policy: NodeThresholdPolicy, at: datetime | None = None, when: str = "now"
) -> ThresholdPreview:
    """Raises :class:`rendering.NoSnapshot` when the cluster has no snapshot."""
    _, local, names = rendering.preview_policy(policy, at)
    _, _, rows = thresholds_in_force(policy.cluster, at)
    targeted = set(names)
    grouped: dict[tuple[str, str, str, str], list[str]] = {}
    for row in rows:
        if row.node in targeted:
            grouped.setdefault(_group_key(row), []).append(row.node)
    return ThresholdPreview(
        nodes=names,
        active=policy.is_active_at(local.time().replace(tzinfo=None)),
        local=local,
        when=when,
        groups=[ThresholdGroup(*key, nodes) for key, nodes in grouped.items()],
        no_match="" if names else no_match_warning(policy),
    )


def render_colocation(cluster: Cluster) -> Rendered:
    content = rendering.colocation_config(cluster)
    text = json.dumps(content, indent=2, sort_keys=True) + "\n" if content else ""
    return Rendered(f"{rendering.COLOCATION_KEY} (slo-controller-config)", text)


def unified_diff(before: str, after: str, *, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=old,
            tofile=new,
        )
    )


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """(css class, line) for showing a unified diff."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "@@")):
            kind = "meta"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        out.append((kind, line))
    return out


# -- history ------------------------------------------------------------------------------------


SELECTOR_FIELDS = frozenset({"node_selector"})
NAME_LIST_FIELDS = frozenset({"node_names"})


def value_text(value: Any, name: str = "") -> str:
    """A stored field's value as text: selectors as Kubernetes writes them, name lists joined
    ("none" when empty), other JSON values as ``key: value`` text (:mod:`policy.web.format`)."""
    if name in SELECTOR_FIELDS:
        return fmt.label_selector(value)
    if name in NAME_LIST_FIELDS:
        return fmt.names(value)
    return fmt.plain(value)


@dataclass(frozen=True)
class Shown:
    """A field's value for a definition list: its text, and (term, text) pairs for a mapping."""

    text: str
    pairs: list[tuple[str, str]] | None = None


def shown(value: Any, name: str = "") -> Shown:
    if name in SELECTOR_FIELDS or name in NAME_LIST_FIELDS:
        return Shown(value_text(value, name))
    return Shown(value_text(value, name), fmt.pairs(value))


def field_label(name: str, labels: Mapping[str, str] | None = None) -> str:
    """The form's label of a stored field (``usage_thresholds`` → "Usage thresholds
    (usageThresholds)"), or its name made readable."""
    if labels and name in labels:
        return labels[name]
    return pretty_name(name)


# Not listed in history: the parent (never changes), the version (in the heading), the
# profiles of a configuration (its document diff shows them).
HIDDEN_IN_HISTORY = frozenset({"profiles", "version", "id", "cluster", "configuration", "profile"})
EMPTY_TEXTS = frozenset({"—", fmt.NONE})


@dataclass(frozen=True)
class HistoryEntry:
    change: PolicyChange
    fields: list[tuple[str, str, str]]  # (field, before, after)
    document_diff: list[tuple[str, str]]
    can_revert: bool


def _document_text(tree: Any) -> str:
    if not isinstance(tree, dict) or "profiles" not in tree:
        return ""
    return yaml.safe_dump(build_document(tree).document, sort_keys=False)


def history_entry(
    change: PolicyChange,
    current_version: int,
    labels: Mapping[str, str] | None = None,
    *,
    every_field: bool = False,
) -> HistoryEntry:
    """One change: the fields it changed (their form labels, values as people read them; with
    ``every_field``, unchanged ones too), and for configurations the document's diff."""
    before_data = change.prechange_data or {}
    after_data = change.postchange_data or {}
    changed = change.diff()
    names = sorted(set(before_data) | set(after_data)) if every_field else list(changed)
    fields = []
    for name in names:
        if name in HIDDEN_IN_HISTORY:
            continue
        before = value_text(before_data.get(name), name) if change.prechange_data else "—"
        after = value_text(after_data.get(name), name) if change.postchange_data else "—"
        if not every_field and (before == after or {before, after} <= EMPTY_TEXTS):
            continue  # stored differently (None, "" or []), read the same: nothing changed
        fields.append((field_label(name, labels), before, after))
    document = ""
    trees = [change.prechange_data, change.postchange_data]
    if any(isinstance(t, dict) and "profiles" in t for t in trees):
        document = unified_diff(
            _document_text(trees[0]),
            _document_text(trees[1]),
            old=f"v{change.object_version - 1}",
            new=f"v{change.object_version}",
        )
    return HistoryEntry(
        change=change,
        fields=fields,
        document_diff=diff_lines(document),
        can_revert=change.postchange_data is not None and change.object_version != current_version,
    )
