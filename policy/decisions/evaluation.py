"""Evaluate a pod against a cluster's newest snapshot and keep the decision (a service).

The engine runs with "now" set to the snapshot's time, so a decision depends only on what was
stored (NodeMetric freshness is judged as it was when the snapshot was taken) and can be
reproduced exactly later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import transaction

from policy.clusters.engine import document_digest, engine_for, evaluate_on
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import Agreement, DecisionOutcome, DecisionSource
from policy.core.validators import dns1123_label_validator, validate_json_value
from policy.decisions import deferred
from policy.decisions.models import PlacementDecision
from policy.policies import documents
from policy.policies.models import SchedulerConfiguration
from scoring.config import Target
from scoring.decision import Decision
from scoring.errors import ConfigurationInvalid, InputError
from scoring.inputs import load_yaml
from scoring.k8s_names import is_dns1123_subdomain
from scoring.objects import parse_pod


class EvaluationError(ValueError):
    """The inputs cannot be evaluated; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str, errors: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.field = field
        self.errors = errors or []


MAX_POD_TEXT = 256 * 1024  # characters of a manifest given as text


def pod_manifest(data: Any) -> dict[str, Any]:
    """A Pod manifest from an object or from YAML/JSON text (as ``kubectl`` prints it);
    :class:`EvaluationError` on field ``pod`` says what is wrong."""
    if isinstance(data, str):
        if len(data) > MAX_POD_TEXT:
            raise EvaluationError("pod", f"longer than {MAX_POD_TEXT} characters")
        try:
            data = load_yaml(data, source="pod")
        except yaml.YAMLError as exc:
            raise EvaluationError("pod", f"not valid YAML or JSON: {exc}") from None
        except InputError as exc:
            raise EvaluationError("pod", str(exc)) from None
    if not isinstance(data, dict) or data.get("kind", "Pod") != "Pod":
        raise EvaluationError("pod", "expected a v1 Pod object (kind: Pod)")
    _check_storable(data)
    _check_names(data.get("metadata"))
    return data


def _check_storable(data: dict[str, Any]) -> None:
    """The manifest is stored with the decision: no NUL, lone surrogate, or oversized value."""
    try:
        validate_json_value(data, max_bytes=MAX_POD_TEXT)
    except ValidationError as exc:
        raise EvaluationError("pod", "; ".join(exc.messages)) from None


def _check_names(metadata: Any) -> None:
    """metadata.name and namespace as the API server validates them (``ValidateObjectMeta``)."""
    if not isinstance(metadata, dict):
        return  # the engine's parser names what is missing
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if isinstance(name, str) and (problems := is_dns1123_subdomain(name)):
        raise EvaluationError("pod", f"metadata.name: Invalid value: {name!r}: {problems[0]}")
    if isinstance(namespace, str) and namespace:
        try:
            dns1123_label_validator(namespace)
        except ValidationError as exc:
            detail = exc.messages[0]
            raise EvaluationError(
                "pod", f"metadata.namespace: Invalid value: {namespace!r}: {detail}"
            ) from None


@dataclass(frozen=True)
class ConfigurationChoice:
    document: Mapping[str, Any] | None
    id: int | None
    version: int | None
    target: Target | None = None  # the cluster's scheduler target (None: inferred)


def choose_configuration(cluster: Cluster, configuration_id: int | None) -> ConfigurationChoice:
    """The cluster's scheduler configuration (checked against ``configuration_id`` when given),
    else kube-scheduler's defaults."""
    chosen = SchedulerConfiguration.objects.filter(cluster=cluster).first()
    if configuration_id is not None and (chosen is None or chosen.pk != configuration_id):
        raise EvaluationError(
            "configuration", f"cluster {cluster.name} has no configuration {configuration_id}"
        )
    if chosen is None:
        return ConfigurationChoice(None, None, None)
    target = cluster.scheduler_target()
    try:
        document = documents.for_target(chosen.written_document(), target)
    except InputError as exc:
        raise EvaluationError("configuration", str(exc)) from None
    return ConfigurationChoice(document, chosen.pk, chosen.version, target)


def _latest_snapshot(cluster: Cluster) -> ClusterSnapshot:
    stored = cluster.latest_snapshot()
    if stored is None:
        raise EvaluationError("cluster", f"cluster {cluster.name} has no snapshot yet")
    return stored


def _outcome(decision: Decision) -> str:
    if decision.error is not None:
        return DecisionOutcome.ERROR
    if decision.selected_node is None:
        return DecisionOutcome.UNSCHEDULABLE
    return DecisionOutcome.SCHEDULED


def outcome_digest(pod: Mapping[str, Any], config_digest: str, decision: Decision) -> str:
    """Identifies what was decided for a pod under a configuration (profile, outcome, node,
    message), whatever snapshot it was decided on: a pending pod is recorded again only when
    that changes, not at every refresh."""
    outcome = [decision.profile, _outcome(decision), decision.selected_node or ""]
    message = (decision.summary() or "") if decision.selected_node is None else ""
    canonical = json.dumps([pod, config_digest, outcome, message], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def inputs_digest(pod: Mapping[str, Any], snapshot_id: int, config_digest: str) -> str:
    """Identifies a decision's inputs, so an unchanged pending pod is not re-evaluated."""
    canonical = json.dumps([pod, snapshot_id, config_digest], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def run(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    configuration_id: int | None = None,
    *,
    on: ClusterSnapshot | None = None,
) -> tuple[Decision, ClusterSnapshot, ConfigurationChoice]:
    """Evaluate without recording: the engine's decision and what it was made from (the
    snapshot ``on``, else the cluster's newest)."""
    stored = on or _latest_snapshot(cluster)
    try:
        pod = parse_pod(manifest)
    except InputError as exc:
        raise EvaluationError("pod", str(exc)) from None
    choice = choose_configuration(cluster, configuration_id)
    try:
        engine = engine_for(choice.document, choice.target)
        return evaluate_on(stored, engine, pod), stored, choice
    except ConfigurationInvalid as exc:
        errors = [e.to_dict() for e in exc.errors]
        raise EvaluationError("configuration", "the configuration is invalid", errors) from None
    except InputError as exc:
        raise EvaluationError("pod", str(exc)) from None


def evaluate_pod(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    *,
    configuration_id: int | None = None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    source: str = DecisionSource.API,
    token_name: str = "",
) -> PlacementDecision:
    """Evaluate ``manifest`` on the cluster's newest snapshot and record the decision."""
    return evaluate_and_record(
        cluster,
        manifest,
        configuration_id=configuration_id,
        user=user,
        source=source,
        token_name=token_name,
    )[0]


def evaluate_and_record(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    *,
    configuration_id: int | None = None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    source: str = DecisionSource.API,
    token_name: str = "",
    defer: bool = False,
) -> tuple[PlacementDecision, Decision]:
    """:func:`evaluate_pod`, its explanation written after when ``defer``; the record and the
    engine's decision (to answer from without the whole explanation)."""
    decision, stored, choice = run(cluster, manifest, configuration_id)
    digest = inputs_digest(manifest, stored.pk, document_digest(choice.document))
    row = record(
        cluster,
        manifest,
        (decision, stored, choice),
        digest=digest,
        user=user,
        source=source,
        token_name=token_name,
        defer=defer,
    )
    return row, decision


def record(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    evaluated: tuple[Decision, ClusterSnapshot, ConfigurationChoice],
    *,
    digest: str,
    user: AbstractBaseUser | AnonymousUser | None = None,
    source: str = DecisionSource.API,
    token_name: str = "",
    actual_node: str = "",
    scheduler_message: str = "",
    defer: bool = False,
) -> PlacementDecision:
    """Store what :func:`run` decided; ``digest`` identifies it for deduplication.
    ``actual_node``: where the cluster's scheduler put the pod (the ``cluster`` source), which
    the decision is compared with. ``defer``: return once the decision is stored and write its
    explanation after (:mod:`policy.decisions.deferred`)."""
    decision, stored, choice = evaluated
    observed = decision.compare(actual_node) if actual_node else None
    agreement = ""
    if observed is not None:
        agreement = Agreement.AGREES if observed.agrees else Agreement.DISAGREES
    row = PlacementDecision(
        cluster=cluster,
        snapshot=stored,
        snapshot_taken_at=stored.taken_at,
        pod_namespace=decision.cycle.pod.namespace,
        pod_name=decision.cycle.pod.name,
        pod_uid=decision.cycle.pod.uid,
        pod=dict(manifest),
        profile=decision.profile,
        configuration_id=choice.id,
        configuration_version=choice.version,
        configuration_digest=document_digest(choice.document),
        selected_node=decision.selected_node or "",
        outcome=_outcome(decision),
        message=decision.summary() or "",
        feasible_nodes=len(decision.feasible),
        total_nodes=len(decision.cycle.snapshot),
        requested_by=user if isinstance(user, User) else None,
        source=source,
        token_name=token_name,
        inputs_digest=digest,
        actual_node=actual_node,
        scheduler_message=scheduler_message,
        agreement=agreement,
        actual_rank=observed.rank if observed else None,
        score_gap=observed.gap if observed else None,
    )
    with transaction.atomic():
        if defer:
            row.explanation_data = b""
            row.save()
            deferred.hold(row, decision, stored, choice.document, choice.target)
        else:
            deferred.write(row, decision, stored)
            row.save()
    return row
