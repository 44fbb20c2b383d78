"""Node threshold policies: Koordinator's per-node ``CustomUsageThresholds`` annotation.

A policy targets nodes (a list of names, or a ``metav1.LabelSelector``), optionally only during
a daily time window in the cluster's time zone, and says which thresholds those nodes get.
When several enabled, active policies match a node, the highest ``priority`` wins (then the
lowest id). The winner's thresholds become the node's ``scheduling.koordinator.sh/usage-thresholds``
annotation (:mod:`policy.policies.rendering`).
"""

from __future__ import annotations

from datetime import time
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from policy.clusters.models import Cluster
from policy.core.models import VersionedModel
from policy.core.validators import json_validator, resource_map_validator, selector_errors
from policy.policies.documents import args_field
from scoring import custom_usage_thresholds, is_dns1123_subdomain
from scoring import validate_loadaware_args as validate_args

_resource_map = [resource_map_validator, json_validator(16 * 1024)]


class NodeThresholdPolicy(VersionedModel):
    SNAPSHOT_FIELDS = (
        "cluster",
        "name",
        "description",
        "enabled",
        "priority",
        "node_names",
        "node_selector",
        "usage_thresholds",
        "prod_usage_thresholds",
        "aggregated_usage_thresholds",
        "aggregated_usage_aggregation_type",
        "aggregated_usage_aggregated_duration",
        "active_from",
        "active_until",
    )

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="threshold_policies"
    )
    name = models.SlugField(max_length=63)
    description = models.CharField(max_length=2000, blank=True)
    enabled = models.BooleanField(default=True)
    priority = models.IntegerField(
        default=0,
        validators=[MinValueValidator(-1000), MaxValueValidator(1000)],
        help_text="When several policies match a node, the highest priority wins (ties: the "
        "oldest policy).",
    )
    node_names = models.JSONField(
        default=list,
        blank=True,
        validators=[json_validator(128 * 1024)],
        help_text="Target these nodes by name (or use node_selector, not both).",
    )
    node_selector = models.JSONField(
        null=True,
        blank=True,
        validators=[json_validator(32 * 1024)],
        help_text="Target the nodes this metav1.LabelSelector selects ({matchLabels, "
        "matchExpressions}; {} selects every node).",
    )
    usage_thresholds = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="usageThresholds: percent per resource, 0-100; replaces the args' map as a "
        "whole on these nodes (a resource left out is not checked).",
    )
    prod_usage_thresholds = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="prodUsageThresholds: percent per resource for prod pods.",
    )
    aggregated_usage_thresholds = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="aggregatedUsage.usageThresholds: percentile thresholds (need a type).",
    )
    aggregated_usage_aggregation_type = models.CharField(
        max_length=16, blank=True, help_text="aggregatedUsage.usageAggregationType."
    )
    aggregated_usage_aggregated_duration = models.CharField(
        max_length=64,
        blank=True,
        help_text="aggregatedUsage.usageAggregatedDuration, e.g. 5m (empty: the longest window).",
    )
    active_from = models.TimeField(
        null=True,
        blank=True,
        help_text="Daily window start in the cluster's time zone (with active_until; a window "
        "may wrap midnight, e.g. 22:00-06:00). Empty: always active.",
    )
    active_until = models.TimeField(null=True, blank=True, help_text="Daily window end.")

    class Meta:
        ordering = ["cluster", "-priority", "id"]
        verbose_name_plural = "node threshold policies"
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"], name="nodethresholdpolicy_name_unique_per_cluster"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}

        def add(field: str, message: str) -> None:
            errors.setdefault(field, []).append(message)

        names = self.node_names if isinstance(self.node_names, list) else None
        if names is None:
            add("node_names", "Must be a list of node names.")
        elif names and self.node_selector is not None:
            add("node_selector", "Target nodes by node_names or by node_selector, not both.")
        elif not names and self.node_selector is None:
            add("node_names", "Target some nodes: give node_names or a node_selector.")
        for name in names or []:
            problems = is_dns1123_subdomain(name) if isinstance(name, str) else ["not a string"]
            if problems:
                add("node_names", f"{name!r}: " + "; ".join(problems))
        if names and len(set(map(str, names))) != len(names):
            add("node_names", "Node names must be unique.")
        if self.node_selector is not None:
            for field, message in selector_errors(self.node_selector, "node_selector"):
                add(field, message)
        value = self.custom_usage_thresholds()
        aggregated = value.get("aggregatedUsage", {})
        if not value:
            add(
                "usage_thresholds",
                "Set at least one of usage_thresholds, prod_usage_thresholds or "
                "aggregated_usage_thresholds: an empty annotation changes nothing.",
            )
        if aggregated and not (
            aggregated.get("usageThresholds") and aggregated.get("usageAggregationType")
        ):
            missing = (
                "aggregated_usage_aggregation_type"
                if aggregated.get("usageThresholds")
                else "aggregated_usage_thresholds"
            )
            add(
                missing,
                "Aggregated thresholds need both thresholds and an aggregation type "
                "(Koordinator ignores aggregatedUsage otherwise).",
            )
        # Koordinator's own rules for thresholds (0-100), types and durations.
        for error in validate_args(self.as_args(), ""):
            add(args_field(error.field) or "usage_thresholds", error.detail)
        if (self.active_from is None) != (self.active_until is None):
            add("active_until", "Give both active_from and active_until, or neither.")
        elif self.active_from is not None and self.active_from == self.active_until:
            add("active_until", "The window is empty: active_until equals active_from.")
        if errors:
            raise ValidationError(errors)

    def as_args(self) -> dict[str, Any]:
        """The thresholds as ``LoadAwareSchedulingArgs`` fields, for the engine's validator."""
        args: dict[str, Any] = {}
        for field, v1_name in (
            ("usage_thresholds", "usageThresholds"),
            ("prod_usage_thresholds", "prodUsageThresholds"),
        ):
            if getattr(self, field) is not None:
                args[v1_name] = getattr(self, field)
        aggregated = self.custom_usage_thresholds().get("aggregatedUsage")
        if aggregated:
            args["aggregated"] = aggregated
        return args

    def is_active_at(self, local: time) -> bool:
        """Whether the daily window contains ``local`` (the cluster's wall-clock time)."""
        start, end = self.active_from, self.active_until
        if start is None or end is None:
            return True
        if start <= end:
            return start <= local < end
        return local >= start or local < end  # wraps midnight

    def custom_usage_thresholds(self) -> dict[str, Any]:
        """The ``CustomUsageThresholds`` JSON object this policy sets on its nodes."""
        return custom_usage_thresholds(
            self.usage_thresholds,
            self.prod_usage_thresholds,
            self.aggregated_usage_thresholds,
            self.aggregated_usage_aggregation_type,
            self.aggregated_usage_aggregated_duration,
        )
