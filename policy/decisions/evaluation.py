"""Evaluate a pod against a cluster's newest snapshot and keep the decision (a service).

The engine tier decides (``evaluate``, :mod:`policy.decisions.questions`): where the cluster's
engine state is held, it evaluates the pod and encodes the whole explanation; the asking
process records the decision with its explanation in one transaction, so a decision is whole
when it is answered. The engine runs with "now" set to the snapshot's time, so a decision
depends only on what was stored (NodeMetric freshness is judged as it was when the snapshot
was taken) and can be reproduced exactly later.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from django.core.exceptions import ValidationError

from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.validators import dns1123_label_validator, validate_json_value
from policy.engine import client
from policy.engine.questions import Refused
from policy.policies import documents
from policy.policies.models import SchedulerConfiguration
from scoring import InputError, Target, is_dns1123_subdomain, load_yaml, workload_pod


class EvaluationError(Refused):
    """The inputs cannot be evaluated; ``field`` names the input at fault. Raised where the
    engine runs, it reaches the asking process as :class:`Refused` and is raised there again
    as this class (:func:`run`)."""


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
    if isinstance(data, dict) and data.get("kind", "Pod") != "Pod":
        data = _template_pod(data)
    if not isinstance(data, dict):
        raise EvaluationError("pod", "expected a v1 Pod object (kind: Pod)")
    _check_storable(data)
    _check_names(data.get("metadata"))
    return data


def _template_pod(workload: dict[str, Any]) -> dict[str, Any]:
    """The first pod a Deployment, ReplicaSet, StatefulSet or Job's controller makes from its
    template (as what-if makes it): the pod that would be scheduled."""
    try:
        pod = workload_pod(workload)
    except KeyError:
        kind = f"{workload.get('apiVersion', '')} {workload.get('kind', '')}".strip()
        raise EvaluationError(
            "pod",
            f"expected a v1 Pod, or an apps/v1 Deployment, ReplicaSet or StatefulSet or a "
            f"batch/v1 Job (its pod template is evaluated); got {kind}",
        ) from None
    except InputError as exc:
        raise EvaluationError("pod", str(exc)) from None
    if pod is None:
        raise EvaluationError("pod", "the workload makes no pod (replicas: 0)")
    return dict(pod)


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


def outcome_digest(pod: Mapping[str, Any], config_digest: str, evaluated: Evaluated) -> str:
    """Identifies what was decided for a pod under a configuration (profile, outcome, node,
    message), whatever snapshot it was decided on: a pending pod is recorded again only when
    that changes, not at every refresh."""
    outcome = [evaluated.profile, evaluated.outcome, evaluated.selected_node]
    message = evaluated.message if not evaluated.selected_node else ""
    canonical = json.dumps([pod, config_digest, outcome, message], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def inputs_digest(pod: Mapping[str, Any], snapshot_id: int, config_digest: str) -> str:
    """Identifies a decision's inputs, so an unchanged pending pod is not re-evaluated."""
    canonical = json.dumps([pod, snapshot_id, config_digest], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Evaluated:
    """The engine's answer to ``evaluate``: the decision's fields, its encoded explanation and,
    when asked, the page of nodes an API answer shows (:mod:`policy.decisions.questions`)."""

    answer: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.answer[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def explanation_data(self) -> bytes:
        return base64.b64decode(self.answer["explanation"]["data"])


def run(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    configuration_id: int | None = None,
    *,
    on: ClusterSnapshot | None = None,
    actual_node: str = "",
    page: tuple[int | None, int | None] | None = None,
) -> Evaluated:
    """Evaluate without recording: the engine's decision on the snapshot ``on``, else the
    cluster's newest; compared with ``actual_node`` when given; with the API's page of nodes
    ``page`` (offset, limit) when given."""
    payload = {
        "cluster": cluster.pk,
        "snapshot": on.pk if on is not None else None,
        "pod": dict(manifest),
        "configuration": configuration_id,
        "actual_node": actual_node,
        "page": list(page) if page is not None else None,
    }
    try:
        return Evaluated(client.ask(cluster.pk, "evaluate", payload))
    except Refused as exc:
        raise EvaluationError(exc.field, str(exc), exc.errors) from None
