"""What schedboard would write to a cluster, rendered from the stored policies.

- the KubeSchedulerConfiguration YAML for the cluster's scheduler ConfigMap: the document as
  written (imported or adopted, in its own apiVersion) with the edits made in schedboard, no
  default filled in (:func:`policy.policies.documents.written_document`); the defaulted document is
  shown as "effective" only;
- per node, the ``scheduling.koordinator.sh/usage-thresholds`` annotation the node threshold
  policies give it (matched against the nodes of the cluster's newest snapshot);
- the ``colocation-config`` JSON of Koordinator's slo-controller ConfigMap for the NodeMetric
  collect policies.

Values are canonical (sorted keys), so rendering the same policies twice gives the same bytes.
"""

from __future__ import annotations

import json
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, time
from types import SimpleNamespace
from typing import Any

import numpy as np
import yaml
from django.utils import timezone

from policy.clusters.gateway.desired import usage_thresholds_annotation
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.engine import client
from policy.engine.questions import Refused, question
from policy.policies import documents
from policy.policies.models import (
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
)
from policy.policies.services import validated_tree
from scoring import (
    ANNOTATION_USAGE_THRESHOLDS,
    BoolArray,
    InputError,
    Snapshot,
    check_configuration,
    dump_configuration,
    load_configuration,
    match_label_selector,
)

COLOCATION_KEY = "colocation-config"
COLOCATION_NOTE = (
    'Koordinator applies collect policies only while colocation-config has "enable": true '
    "(otherwise NodeMetrics report every 60 s over 300 s); schedboard does not change enable."
)


class NoSnapshot(Exception):
    """The cluster has no snapshot to match nodes against."""


def annotation_value(policy: NodeThresholdPolicy) -> str | None:
    """The annotation text a policy sets, spelt exactly as the gateway writes it."""
    return usage_thresholds_annotation(policy.custom_usage_thresholds())


# -- scheduler configuration --------------------------------------------------------------------


def render_scheduler_configuration(configuration: SchedulerConfiguration) -> str:
    """The YAML written to the scheduler ConfigMap: the document as written, sparse."""
    # Stored configurations are valid; an engine upgrade could change that (PolicyInvalid).
    _, built = validated_tree(configuration)
    return document_yaml(built.written)


def document_yaml(document: Any) -> str:
    """A JSON-able document as YAML, keys in the order written."""
    plain = json.loads(json.dumps(document))
    text: str = yaml.safe_dump(plain, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return text


def check_scheduler_configuration(configuration: SchedulerConfiguration) -> dict[str, Any]:
    """The engine's check of what would be written, for the cluster's scheduler target:
    ``valid``, ``errors``, ``warnings`` (names the target's registry does not know for sure),
    ``target``, ``apiVersion`` and ``registry`` (as ``python -m scoring validate --output
    json``)."""
    target = configuration.cluster.scheduler_target()
    tree = configuration.tree()
    try:
        written = documents.for_target(documents.build_document(tree).written, target)
        return check_configuration(written, source_name="document", target=target).to_dict()
    except InputError as exc:
        errors = [e.to_dict() for e in documents.input_errors(exc)]
        return {"valid": False, "errors": errors, "warnings": [], "target": str(target or "")}


def effective_configuration(configuration: SchedulerConfiguration) -> str:
    """What the scheduler runs with the written document: every default filled in (v1), for
    reading only, never written."""
    _, built = validated_tree(configuration)
    target = configuration.cluster.scheduler_target()  # as validated: a custom build's names
    return dump_configuration(load_configuration(built.written, target=target))


# -- node thresholds ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeThreshold:
    node: str
    value: str | None  # the annotation value; None: no policy applies (annotation absent)
    policy: NodeThresholdPolicy | None
    matching: tuple[str, ...]  # every enabled policy that targets the node, winner first


def policy_mask(snapshot: Snapshot, policy: NodeThresholdPolicy | SimpleNamespace) -> BoolArray:
    """The snapshot's nodes a policy targets (by name, or by its label selector)."""
    if policy.node_selector is not None:
        return match_label_selector(snapshot, policy.node_selector, "node_selector")
    wanted = set(policy.node_names or [])
    return np.array([name in wanted for name in snapshot.node_names], dtype=bool)


def latest_snapshot(cluster: Cluster) -> ClusterSnapshot:
    stored = cluster.latest_snapshot()
    if stored is None:
        raise NoSnapshot(f"cluster {cluster.name} has no snapshot yet")
    return stored


def node_targets(
    stored: ClusterSnapshot, policies: list[NodeThresholdPolicy]
) -> tuple[list[str], list[BoolArray]]:
    """The snapshot's node names, and for each policy the nodes it targets (by name, or by its
    label selector), from the engine tier, which holds the snapshot's nodes."""
    targets = [
        {"node_selector": policy.node_selector, "node_names": policy.node_names}
        for policy in policies
    ]
    answer = client.ask(
        stored.cluster_id, "node-targets", {"snapshot": stored.pk, "targets": targets}
    )
    names: list[str] = answer["nodes"]
    masks = []
    for hits in answer["targets"]:
        mask = np.zeros(len(names), dtype=bool)
        mask[hits] = True
        masks.append(mask)
    return names, masks


@question("node-targets")
def _node_targets_question(payload: dict[str, Any]) -> dict[str, Any]:
    snapshot = _held_snapshot(payload["snapshot"])
    targets = [
        np.flatnonzero(policy_mask(snapshot, SimpleNamespace(**target))).tolist()
        for target in payload["targets"]
    ]
    carried = {
        node.name: node.annotations[ANNOTATION_USAGE_THRESHOLDS]
        for node in snapshot.nodes
        if ANNOTATION_USAGE_THRESHOLDS in node.annotations
    }
    return {"nodes": list(snapshot.node_names), "targets": targets, "carried": carried}


def carried_thresholds(stored: ClusterSnapshot) -> dict[str, str]:
    """The usage-thresholds annotation each node of ``stored`` carries (whoever wrote it)."""
    answer = client.ask(stored.cluster_id, "node-targets", {"snapshot": stored.pk, "targets": []})
    carried: dict[str, str] = answer["carried"]
    return carried


@question("resources")
def _resources_question(payload: dict[str, Any]) -> dict[str, Any]:
    """The resources some node of the snapshot reports in its allocatable."""
    return {"resources": sorted(_held_snapshot(payload["snapshot"]).resources)}


def _held_snapshot(snapshot_id: int) -> Snapshot:
    from policy.clusters.engine import snapshot_for

    stored = ClusterSnapshot.snapshots.summaries().filter(pk=snapshot_id).first()
    if stored is None:
        raise Refused("snapshot", f"no snapshot {snapshot_id}")
    try:
        return snapshot_for(stored)
    except (InputError, ValueError, TypeError, AttributeError, KeyError) as exc:
        raise Refused("snapshot", f"the snapshot cannot be read: {exc}") from None


def reported_resources(stored: ClusterSnapshot) -> list[str]:
    """The resources some node of ``stored`` reports (:class:`Refused`: unreadable)."""
    answer = client.ask(stored.cluster_id, "resources", {"snapshot": stored.pk})
    resources: list[str] = answer["resources"]
    return resources


THRESHOLD_FIELDS = ("usage_thresholds", "prod_usage_thresholds", "aggregated_usage_thresholds")


def threshold_warnings(policy: NodeThresholdPolicy) -> list[str]:
    """Resources the policy sets a threshold for that no node of the cluster's newest snapshot
    reports: valid, but never checked (a typo such as ``cpuu`` also drops the args' cpu
    threshold, since the annotation's map replaces the args' map)."""
    stored = policy.cluster.latest_snapshot()
    if stored is None:
        return []
    try:
        known = set(reported_resources(stored))
    except Refused:
        return []
    warnings = []
    for field in THRESHOLD_FIELDS:
        for name in sorted(set(getattr(policy, field) or {}) - known):
            warnings.append(
                f"{field}: no node of the newest snapshot reports {name!r}; "
                "its threshold is never checked"
            )
    return warnings


def local_time(cluster: Cluster, at: datetime | None) -> datetime:
    return (at or timezone.now()).astimezone(zoneinfo.ZoneInfo(cluster.timezone))


def today_at(cluster: Cluster, wall_clock: time) -> datetime:
    """Today (in the cluster's time zone) at ``wall_clock`` there, as an aware datetime: the
    moment a preview "at 02:00" evaluates the policies' daily windows at."""
    zone = zoneinfo.ZoneInfo(cluster.timezone)
    return datetime.combine(local_time(cluster, None).date(), wall_clock, tzinfo=zone)


def render_node_thresholds(
    cluster: Cluster, at: datetime | None = None, stored: ClusterSnapshot | None = None
) -> tuple[ClusterSnapshot, datetime, list[NodeThreshold]]:
    """Each node of the newest snapshot (or ``stored``) with the annotation value it gets at
    ``at`` (now).

    Enabled policies whose time window contains ``at`` (in the cluster's time zone) compete;
    the highest priority wins, then the oldest policy.
    """
    stored = stored or latest_snapshot(cluster)
    local = local_time(cluster, at)
    policies = list(cluster.threshold_policies.filter(enabled=True).order_by("-priority", "id"))
    node_names, masks = node_targets(stored, policies)
    active = [policy.is_active_at(local.time().replace(tzinfo=None)) for policy in policies]
    rows = []
    for i, name in enumerate(node_names):
        matching = [p for p, mask in zip(policies, masks, strict=True) if mask[i]]
        winner = next(
            (p for p, mask, on in zip(policies, masks, active, strict=True) if on and mask[i]),
            None,
        )
        ordered = ([winner] if winner else []) + [p for p in matching if p is not winner]
        rows.append(
            NodeThreshold(
                node=name,
                value=annotation_value(winner) if winner else None,
                policy=winner,
                matching=tuple(p.name for p in ordered),
            )
        )
    return stored, local, rows


def preview_policy(
    policy: NodeThresholdPolicy, at: datetime | None = None
) -> tuple[ClusterSnapshot, datetime, list[str]]:
    """The nodes of the newest snapshot the policy targets (whatever its window)."""
    stored = latest_snapshot(policy.cluster)
    node_names, [mask] = node_targets(stored, [policy])
    names = [name for name, hit in zip(node_names, mask, strict=True) if hit]
    return stored, local_time(policy.cluster, at), names


# -- NodeMetric collect policies ----------------------------------------------------------------


def colocation_config(cluster: Cluster) -> dict[str, Any]:
    """The ``colocation-config`` fields the collect policies set (cluster-wide and nodeConfigs)."""
    policies = list(
        NodeMetricCollectPolicy.objects.filter(cluster=cluster).order_by(
            "-is_default", "-priority", "id"
        )
    )
    content: dict[str, Any] = {}
    node_configs = []
    for policy in policies:
        if policy.is_default:
            content.update(policy.colocation_fields())
        else:
            node_configs.append(
                {
                    "name": policy.name,
                    "nodeSelector": policy.node_selector,
                    **policy.colocation_fields(),
                }
            )
    if node_configs:
        content["nodeConfigs"] = node_configs
    return content
