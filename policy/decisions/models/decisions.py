"""Placement decisions: what the engine decided for a pod, and why, kept as history."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from django.conf import settings
from django.db import models

from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import Agreement, DecisionOutcome, DecisionSource
from scoring import (
    BASE_DIGEST_BYTES,
    DecisionBase,
    StoredExplanation,
    base_digest,
    encode_explanation,
)


class ExplanationBase(models.Model):
    """The columns of one decision's explanation, which the other decisions made on the same
    snapshot are compressed against (``scoring.DecisionBase``): their nodes' usage,
    requests and limits are the snapshot's, stored here once. Kept while a decision needs it
    (``retention.prune_decisions`` deletes the unused ones), whatever becomes of the snapshot.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="explanation_bases")
    snapshot = models.ForeignKey(
        ClusterSnapshot, null=True, on_delete=models.SET_NULL, related_name="explanation_bases"
    )
    data = models.BinaryField(help_text="Encoded by scoring.decision_codec.Base.")
    digest = models.CharField(
        max_length=2 * BASE_DIGEST_BYTES,
        help_text="What the decisions' data name it by (hex): its columns' SHA-256, cut short.",
    )
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"explanation base {self.pk} of snapshot {self.snapshot_id}"

    def base(self) -> DecisionBase:
        """The decoded base (kept by this process, for the decisions that follow)."""
        cached = self.__dict__.get("_base") or _remembered(bytes.fromhex(self.digest))
        if cached is None:
            cached = DecisionBase.from_bytes(bytes(self.data))
        self.keep(cached)
        return cached

    def keep(self, base: DecisionBase) -> None:
        """Remember ``base``, this row's decoded data."""
        self.__dict__["_base"] = base
        _remember(base)


class PlacementDecision(models.Model):
    """One evaluation of a pod: the inputs that identify it and the engine's full explanation.

    ``explanation`` is the engine contract's JSON (every node's filter results and scores), so
    a decision can be shown again exactly as it was made, whatever the cluster did since. It is
    stored encoded (``scoring.decision_codec``: columns, compressed), tens of kilobytes where
    the JSON takes megabytes, and rebuilt when read; ``stored_explanation()`` reads a few
    nodes without rebuilding the others.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="decisions")
    snapshot = models.ForeignKey(
        ClusterSnapshot, null=True, on_delete=models.SET_NULL, related_name="decisions"
    )
    snapshot_taken_at = models.DateTimeField(help_text="When the evaluated snapshot was taken.")
    pod_namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    pod_uid = models.CharField(max_length=64, blank=True)
    pod = models.JSONField(help_text="The Pod manifest as evaluated.")
    profile = models.CharField(max_length=253, help_text="The profile's schedulerName.")
    configuration_id = models.PositiveIntegerField(
        null=True, blank=True, help_text="Scheduler configuration evaluated (none: defaults)."
    )
    configuration_version = models.PositiveIntegerField(null=True, blank=True)
    configuration_digest = models.CharField(
        max_length=64, help_text="SHA-256 of the evaluated KubeSchedulerConfiguration document."
    )
    selected_node = models.CharField(max_length=253, blank=True)
    outcome = models.CharField(max_length=16, choices=DecisionOutcome.choices)
    message = models.TextField(blank=True, help_text="Why no node fits, as kube-scheduler says it.")
    feasible_nodes = models.PositiveIntegerField()
    total_nodes = models.PositiveIntegerField()
    explanation_data = models.BinaryField(
        help_text="The engine's decision, node by node, encoded by scoring.decision_codec."
    )
    explanation_base = models.ForeignKey(
        ExplanationBase,
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="decisions",
        help_text="What explanation_data was compressed against (none: alone).",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    source = models.CharField(max_length=16, choices=DecisionSource.choices)
    # Decisions of the ``cluster`` source: where the scheduler put the pod, and how the
    # engine's decision on the snapshot before the binding compares (Decision.compare).
    actual_node = models.CharField(max_length=253, blank=True)
    # A pending pod's newest FailedScheduling event: why the cluster's scheduler did not place
    # it, to read beside the engine's reasons.
    scheduler_message = models.TextField(blank=True)
    agreement = models.CharField(max_length=16, choices=Agreement.choices, blank=True)
    actual_rank = models.PositiveIntegerField(null=True, blank=True)
    score_gap = models.BigIntegerField(null=True, blank=True)
    token_name = models.CharField(max_length=100, blank=True)
    inputs_digest = models.CharField(
        max_length=64, db_index=True, help_text="Pod + snapshot + configuration, to skip repeats."
    )
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["cluster", "-created"], name="decision_cluster_created"),
            models.Index(fields=["pod_namespace", "pod_name"], name="decision_pod"),
            models.Index(fields=["selected_node"], name="decision_node"),
        ]

    def __str__(self) -> str:
        return f"{self.pod_namespace}/{self.pod_name} → {self.selected_node or self.outcome}"

    @property
    def explanation(self) -> dict[str, Any]:
        """The engine contract's JSON, rebuilt from the stored bytes (once per instance)."""
        cached: dict[str, Any] | None = self.__dict__.get("_explanation")
        if cached is None:
            cached = self.stored_explanation().to_dict()
            self.__dict__["_explanation"] = cached
        return cached

    def _never_written(self) -> dict[str, Any]:
        """What is known of a decision whose explanation was never written (recorded by an
        older release that wrote explanations after answering, and never did for this one)."""
        explanation: dict[str, Any] = {
            "pod": f"{self.pod_namespace}/{self.pod_name}",
            "profile": self.profile,
            "selectedNode": self.selected_node or None,
            "feasibleNodes": self.feasible_nodes,
            "totalNodes": self.total_nodes,
            "nodes": [],
            "skippedPlugins": [],
            "rankingMayDiffer": False,
            "rankingMayDifferBecause": [],
            "explanationNotWritten": True,
        }
        if self.message:
            explanation["message"] = self.message
        return explanation

    def stored_explanation(self) -> StoredExplanation:
        """The stored explanation, read lazily (a page of nodes without the others)."""
        stored: StoredExplanation | None = self.__dict__.get("_stored")
        if stored is None:
            data = bytes(self.explanation_data) or encode_explanation(self._never_written())
            stored = StoredExplanation(data, _base_of(data, self))
            self.__dict__["_stored"] = stored
        return stored


_BASES_KEPT = 8  # decoded bases a process keeps (about 1 MB each on 5,000 nodes)
_bases: OrderedDict[bytes, DecisionBase] = OrderedDict()
_bases_lock = threading.Lock()


def _base_of(data: bytes, decision: PlacementDecision) -> DecisionBase | None:
    """The base ``data`` was compressed against, by its digest: a few recent ones are kept
    decoded, since a page of decisions usually shares one."""
    digest = base_digest(data)
    if digest is None or decision.explanation_base_id is None:
        return None
    cached = _remembered(digest)
    if cached is not None:
        return cached
    return ExplanationBase.objects.get(pk=decision.explanation_base_id).base()


def _remembered(digest: bytes) -> DecisionBase | None:
    with _bases_lock:
        cached = _bases.get(digest)
        if cached is not None:
            _bases.move_to_end(digest)
        return cached


def _remember(base: DecisionBase) -> None:
    with _bases_lock:
        _bases[base.digest] = base
        _bases.move_to_end(base.digest)
        while len(_bases) > _BASES_KEPT:
            _bases.popitem(last=False)
