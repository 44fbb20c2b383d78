"""NodeMetric collect policies: how often koordlet reports and over what it averages.

They render into Koordinator's ``slo-controller-config`` ``colocation-config``: the cluster
default sets ``metricReportIntervalSeconds`` / ``metricAggregateDurationSeconds`` at the top
level, each override a ``nodeConfigs[]`` entry with a ``nodeSelector`` (the first matching
entry applies to a node, so overrides are listed by descending priority).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from policy.clusters.models import Cluster
from policy.core.models import VersionedModel
from policy.core.validators import json_validator, selector_errors
from scoring import INT64_MAX

# Koordinator validates these with `validate:"omitempty,min=1"`.
_SECONDS = [MinValueValidator(1), MaxValueValidator(INT64_MAX)]


class NodeMetricCollectPolicy(VersionedModel):
    SNAPSHOT_FIELDS = (
        "cluster",
        "name",
        "description",
        "is_default",
        "node_selector",
        "priority",
        "report_interval_seconds",
        "aggregate_duration_seconds",
    )

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="collect_policies")
    name = models.SlugField(max_length=63, help_text="Names the nodeConfigs entry of an override.")
    description = models.CharField(max_length=2000, blank=True)
    is_default = models.BooleanField(
        default=False,
        help_text="The cluster default (at most one per cluster, without a node selector).",
    )
    node_selector = models.JSONField(
        null=True,
        blank=True,
        validators=[json_validator(32 * 1024)],
        help_text="Overrides: the metav1.LabelSelector of the nodes it applies to.",
    )
    priority = models.IntegerField(
        default=0,
        validators=[MinValueValidator(-1000), MaxValueValidator(1000)],
        help_text="Overrides are listed by descending priority; a node takes the first match.",
    )
    report_interval_seconds = models.BigIntegerField(
        null=True,
        blank=True,
        validators=_SECONDS,
        help_text="reportIntervalSeconds: NodeMetric report period (> 0; Koordinator's "
        "default 60).",
    )
    aggregate_duration_seconds = models.BigIntegerField(
        null=True,
        blank=True,
        validators=_SECONDS,
        help_text="aggregateDurationSeconds: usage averaging period (> 0; default 300).",
    )

    class Meta:
        ordering = ["cluster", "-is_default", "-priority", "id"]
        verbose_name_plural = "node metric collect policies"
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"], name="collectpolicy_name_unique_per_cluster"
            ),
            models.UniqueConstraint(
                fields=["cluster"],
                condition=Q(is_default=True),
                name="collectpolicy_one_default_per_cluster",
                violation_error_message="The cluster already has a default collect policy.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        if self.is_default and self.node_selector is not None:
            errors["node_selector"] = ["The cluster default applies to every node: no selector."]
        elif not self.is_default and self.node_selector is None:
            errors["node_selector"] = ["An override needs the node selector it applies to."]
        elif self.node_selector is not None:
            for field, message in selector_errors(self.node_selector, "node_selector"):
                errors.setdefault(field, []).append(message)
        if self.report_interval_seconds is None and self.aggregate_duration_seconds is None:
            errors["report_interval_seconds"] = [
                "Set report_interval_seconds, aggregate_duration_seconds or both."
            ]
        if errors:
            raise ValidationError(errors)

    def colocation_fields(self) -> dict[str, int]:
        """This policy's ``colocation-config`` fields (cluster level or a nodeConfigs entry)."""
        fields: dict[str, int] = {}
        if self.aggregate_duration_seconds is not None:
            fields["metricAggregateDurationSeconds"] = self.aggregate_duration_seconds
        if self.report_interval_seconds is not None:
            fields["metricReportIntervalSeconds"] = self.report_interval_seconds
        return fields
