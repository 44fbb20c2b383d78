"""Preparing a stored snapshot for evaluations in the worker, so web processes need not build
it (policy.clusters.prepared_engine)."""

from __future__ import annotations

import logging

from django.conf import settings

from policy.clusters import prepared_engine
from policy.clusters.engine import engine_for, evaluate_on, snapshot_for
from policy.clusters.models import ClusterSnapshot
from policy.decisions.evaluation import EvaluationError, choose_configuration
from scoring.errors import InputError
from scoring.objects import parse_pod

logger = logging.getLogger(__name__)


def probe(scheduler_name: str) -> dict[str, object]:
    """A pod asking for nothing: evaluating it builds each plugin's per-snapshot state."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "schedboard-prepare", "namespace": "default"},
        "spec": {"schedulerName": scheduler_name, "containers": [{"name": "probe"}]},
    }


def prepare_newest_engine(cluster_id: int) -> int:
    """:func:`prepare_engine` of the cluster's newest snapshot when it has
    ``PREPARED_ENGINE_NODES`` nodes or more, unless it is prepared for this code already
    (0 then, or when the cluster has no snapshot)."""
    stored = ClusterSnapshot.snapshots.summaries().filter(cluster_id=cluster_id).first()
    if stored is None or stored.node_count < settings.PREPARED_ENGINE_NODES:
        return 0
    if prepared_engine.is_prepared(stored):
        return 0
    return prepare_engine(stored)


def prepare_engine(stored: ClusterSnapshot) -> int:
    """Build the engine snapshot of ``stored`` with the plugin state of every profile of the
    cluster's configuration, and store it; returns the bytes stored (0: nothing stored, the
    configuration or snapshot cannot be evaluated)."""
    try:
        choice = choose_configuration(stored.cluster, None)
        engine = engine_for(choice.document, choice.target)
        for name in engine.frameworks:
            evaluate_on(stored, engine, parse_pod(probe(name)))
    except (EvaluationError, InputError) as exc:
        logger.info("snapshot %s: engine snapshot not prepared: %s", stored.pk, exc)
        return 0
    return prepared_engine.save(stored, snapshot_for(stored))
