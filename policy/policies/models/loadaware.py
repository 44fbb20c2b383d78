"""Koordinator's ``LoadAwareSchedulingArgs`` as a typed object attached to a profile.

Every field is optional: unset (null) means Koordinator's default applies (``default_args`` in
``scoring.plugins.loadaware.args``); the help texts give those defaults. Rendering and
validation are the engine's: the args become the profile's ``LoadAwareScheduling``
``pluginConfig`` entry.
"""

from __future__ import annotations

from typing import Any

from django.core.validators import MaxValueValidator
from django.db import models

from policy.core.models import VersionedModel
from policy.core.validators import json_validator, resource_map_validator
from policy.policies.documents import AGGREGATED_FIELDS, ARGS_FIELDS, args_to_v1
from policy.policies.models.scheduler import SchedulerProfile

_resource_map = [resource_map_validator, json_validator(16 * 1024)]


class LoadAwareSchedulingArgs(VersionedModel):
    """``LoadAwareSchedulingArgs`` of one profile (Koordinator v1.7+ fields)."""

    SNAPSHOT_FIELDS = ("profile", "plugin_config_index", *ARGS_FIELDS, *AGGREGATED_FIELDS)

    profile = models.OneToOneField(
        SchedulerProfile, on_delete=models.CASCADE, related_name="loadaware_args"
    )
    plugin_config_index = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(1000)],
        help_text="Position of the LoadAwareScheduling entry in the profile's pluginConfig "
        "(kept from an import); empty: last.",
    )
    node_metric_expiration_seconds = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="NodeMetric expiration in seconds: an older NodeMetric makes the node abnormal. "
        "Default 180; must be > 0.",
    )
    filter_expired_node_metrics = models.BooleanField(
        null=True,
        blank=True,
        help_text="Filter out nodes whose NodeMetric expired (deprecated upstream, still "
        "checked). Default true.",
    )
    enable_schedule_when_node_metrics_expired = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether nodes with an expired NodeMetric may still receive pods. Default false.",
    )
    resource_weights = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="Score weight per resource, each in (0, 100]. Default {cpu: 1, memory: 1} "
        "(only when empty and dominantResourceWeight is 0). Every resource needs an "
        "estimatedScalingFactors entry.",
    )
    dominant_resource_weight = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Weight of the dominant (most used) resource in the score, 0-100 (Dominant "
        "Resource Fairness). Default 0.",
    )
    usage_thresholds = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="Filter: usage threshold percent per resource, 0-100 (0: not checked). "
        "Default {cpu: 65, memory: 95} when empty; a non-empty map replaces the defaults.",
    )
    prod_usage_thresholds = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="Filter for prod pods: usage threshold percent of prod pods against the whole "
        "node. Not enabled by default.",
    )
    prod_usage_include_sys = models.BooleanField(
        null=True,
        blank=True,
        help_text="Include system usage (not used by pods) in prod usage. Default false.",
    )
    score_according_prod_usage = models.BooleanField(
        null=True,
        blank=True,
        help_text="Score prod pods according to prod usage. Default false.",
    )
    estimator = models.CharField(
        max_length=253,
        blank=True,
        help_text="Estimator name; empty or unknown: the default estimator.",
    )
    estimated_scaling_factors = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="Percent of max(request, limit) a pod is estimated to use, each in (0, 100]. "
        "Default {cpu: 85, memory: 70} (added where missing).",
    )
    estimated_seconds_after_pod_scheduled = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Force estimation for this many seconds after PodScheduled (<= 0: off).",
    )
    estimated_seconds_after_initialized = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Force estimation for this many seconds after Initialized (<= 0: off).",
    )
    allow_customize_estimation = models.BooleanField(
        null=True,
        blank=True,
        help_text="Read estimation settings from pod annotations. Default false.",
    )
    aggregated_usage_thresholds = models.JSONField(
        null=True,
        blank=True,
        validators=_resource_map,
        help_text="aggregated.usageThresholds: percentile usage thresholds, 0-100 (active with "
        "an aggregation type).",
    )
    aggregated_usage_aggregation_type = models.CharField(
        max_length=16,
        blank=True,
        help_text="aggregated.usageAggregationType: avg, p50, p90, p95 or p99.",
    )
    aggregated_usage_aggregated_duration = models.CharField(
        max_length=64,
        blank=True,
        help_text="aggregated.usageAggregatedDuration, a duration such as 5m (>= 0; empty or "
        "0: the longest window reported).",
    )
    aggregated_score_aggregation_type = models.CharField(
        max_length=16,
        blank=True,
        help_text="aggregated.scoreAggregationType: avg, p50, p90, p95 or p99 (empty: score on "
        "the current usage).",
    )
    aggregated_score_aggregated_duration = models.CharField(
        max_length=64,
        blank=True,
        help_text="aggregated.scoreAggregatedDuration, a duration such as 5m (>= 0).",
    )
    supported_resources = models.JSONField(
        null=True,
        blank=True,
        validators=[json_validator(16 * 1024)],
        help_text="Extra resource names used only in node annotations (cpu, memory and every "
        "resource in these args are supported already).",
    )

    class Meta:
        verbose_name = "LoadAware scheduling args"
        verbose_name_plural = "LoadAware scheduling args"

    def __str__(self) -> str:
        return f"LoadAwareSchedulingArgs of {self.profile}"

    def cluster_id_for_history(self) -> int | None:
        return self.profile.configuration.cluster_id

    def to_args(self) -> dict[str, Any]:
        """The v1 args JSON (without apiVersion/kind): only the fields that are set."""
        return args_to_v1(self.snapshot())
