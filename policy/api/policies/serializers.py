"""Serializers of the policy objects: types, shapes and sizes only.

What values mean (thresholds in 0..100, known plugins, one queueSort...) is for the engine to
say: the services validate the whole configuration with it. Here JSON structures that keep the
v1 shape (plugins, pluginConfig, label selectors) are checked strictly: an unknown key is an
error, as kube-scheduler's strict decoding makes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from policy.api.fields import SnapshotRefSerializer
from policy.api.strict import ModelSerializer, StrictCharField
from policy.clusters.models import Cluster
from policy.core.validators import (
    MAX_JSON_BYTES,
    plugin_config_validator,
    resource_map_validator,
    validate_json_value,
)
from policy.policies import descheduler
from policy.policies.models import (
    DeschedulerConfiguration,
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.policies.rendering import annotation_value, threshold_warnings
from scoring import AGGREGATION_TYPES, INT32_MAX, INT32_MIN, PLUGINS_FIELD_ORDER, LowNodeLoadArgs
from scoring import default_loadaware_args as default_args


def plain(value: Any) -> Any:
    """Nested serializer output (OrderedDicts) as plain JSON data."""
    return json.loads(json.dumps(value))


class StrictMixin:
    """Refuses keys the serializer does not declare (read-only ones are tolerated, so a
    client may PUT back what it read)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(str(k) for k in data if k not in self.fields)  # type: ignore[attr-defined]
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Unknown field."] for name in unknown}, code="unknown"
                )
        return super().to_internal_value(data)  # type: ignore[misc]


@extend_schema_field(OpenApiTypes.OBJECT)
class JSONObjectField(serializers.JSONField):
    """Any JSON object (kept as given), within the JSON size limits."""

    def __init__(self, *, max_bytes: int = MAX_JSON_BYTES, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_bytes = max_bytes

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.", code="not_a_dict")
        try:
            validate_json_value(value, max_bytes=self.max_bytes)
        except Exception as exc:  # django ValidationError
            raise serializers.ValidationError(_messages(exc)) from None
        return value


def _messages(exc: Exception) -> list[str]:
    return list(getattr(exc, "messages", [str(exc)]))


class ResourceMapField(serializers.DictField):
    """``map[ResourceName]int64``."""

    child = serializers.IntegerField()  # the range is the shared rule's (resource_map_validator)

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        value = dict(super().to_internal_value(data))
        try:
            resource_map_validator(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(_messages(exc), code="invalid") from None
        return value


def _name_field(**kwargs: Any) -> serializers.CharField:
    return StrictCharField(max_length=253, **kwargs)


class LabelSelectorRequirementSerializer(StrictMixin, serializers.Serializer[Any]):
    key = StrictCharField(max_length=317)
    operator = StrictCharField(max_length=32)
    values = serializers.ListField(
        child=StrictCharField(max_length=63, allow_blank=True),
        required=False,
        max_length=1000,
    )


class LabelSelectorSerializer(StrictMixin, serializers.Serializer[Any]):
    """``metav1.LabelSelector``: ``{}`` selects every node."""

    matchLabels = serializers.DictField(
        child=StrictCharField(max_length=63, allow_blank=True), required=False
    )
    matchExpressions = serializers.ListField(
        child=LabelSelectorRequirementSerializer(), required=False, max_length=100
    )


class PluginSerializer(StrictMixin, serializers.Serializer[Any]):
    name = _name_field()
    weight = serializers.IntegerField(
        required=False, allow_null=True, min_value=INT32_MIN, max_value=INT32_MAX
    )


class PluginSetSerializer(StrictMixin, serializers.Serializer[Any]):
    enabled = serializers.ListField(child=PluginSerializer(), required=False, max_length=200)
    disabled = serializers.ListField(child=PluginSerializer(), required=False, max_length=200)


PluginsSerializer: type[serializers.Serializer[Any]] = serializers.SerializerMetaclass(
    "PluginsSerializer",
    (StrictMixin, serializers.Serializer),
    {
        "__doc__": "v1 ``Plugins``: a plugin set per extension point (and ``multiPoint``).",
        **{point: PluginSetSerializer(required=False) for point in PLUGINS_FIELD_ORDER},
    },
)


class PluginConfigSerializer(StrictMixin, serializers.Serializer[Any]):
    name = _name_field()
    args = JSONObjectField(required=False, allow_null=True)


class VersionedSerializerMixin:
    """``version`` and timestamps are read-only; the parent field is set at creation only."""

    parent_field: ClassVar[str] = ""

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields: dict[str, Any] = super().get_fields()  # type: ignore[misc]
        if self.parent_field and getattr(self, "instance", None) is not None:
            fields[self.parent_field].read_only = True
        return fields


COMMON_READ_ONLY = ["id", "version", "created", "updated"]


# -- scheduler configurations -------------------------------------------------------------------


class ProfileSummarySerializer(ModelSerializer[SchedulerProfile]):
    class Meta:
        model = SchedulerProfile
        fields = ["id", "position", "scheduler_name", "version"]


class SchedulerConfigurationSerializer(
    StrictMixin, VersionedSerializerMixin, ModelSerializer[SchedulerConfiguration]
):
    parent_field = "cluster"
    url = serializers.HyperlinkedIdentityField(view_name="api:schedulerconfiguration-detail")
    leader_election = JSONObjectField(required=False, max_bytes=16 * 1024)
    client_connection = JSONObjectField(required=False, max_bytes=16 * 1024)
    extenders = serializers.ListField(
        child=JSONObjectField(max_bytes=32 * 1024), required=False, max_length=100
    )
    profiles = ProfileSummarySerializer(many=True, read_only=True)
    api_version = StrictCharField(
        read_only=True,
        help_text="The apiVersion the configuration is written in (the imported or adopted "
        "document's; v1 when it was built here).",
    )

    class Meta:
        model = SchedulerConfiguration
        fields = [
            "id",
            "url",
            "cluster",
            "version",
            "description",
            "parallelism",
            "percentage_of_nodes_to_score",
            "pod_initial_backoff_seconds",
            "pod_max_backoff_seconds",
            "enable_profiling",
            "enable_contention_profiling",
            "delay_cache_until_active",
            "leader_election",
            "client_connection",
            "extenders",
            "profiles",
            "api_version",
            "created",
            "updated",
        ]
        read_only_fields = COMMON_READ_ONLY


class SchedulerProfileSerializer(
    StrictMixin, VersionedSerializerMixin, ModelSerializer[SchedulerProfile]
):
    parent_field = "configuration"
    url = serializers.HyperlinkedIdentityField(view_name="api:schedulerprofile-detail")
    plugins = PluginsSerializer(required=False)
    plugin_config = serializers.ListField(
        child=PluginConfigSerializer(), required=False, max_length=100
    )
    loadaware_args: serializers.PrimaryKeyRelatedField[Any] = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text="This profile's LoadAwareScheduling args (loadaware-args), if any.",
    )

    class Meta:
        model = SchedulerProfile
        fields = [
            "id",
            "url",
            "configuration",
            "version",
            "position",
            "scheduler_name",
            "percentage_of_nodes_to_score",
            "plugins",
            "plugin_config",
            "loadaware_args",
            "created",
            "updated",
        ]
        read_only_fields = COMMON_READ_ONLY

    def validate_plugins(self, value: Any) -> dict[str, Any]:
        return plain(value) if value is not None else {}

    def validate_plugin_config(self, value: Any) -> list[dict[str, Any]]:
        entries = plain(value)
        try:
            plugin_config_validator(entries)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(_messages(exc)) from None
        for entry in entries:
            if entry.get("args") is None:
                entry.pop("args", None)
        return list(entries)


class LoadAwareArgsSerializer(
    StrictMixin, VersionedSerializerMixin, ModelSerializer[LoadAwareSchedulingArgs]
):
    parent_field = "profile"
    url = serializers.HyperlinkedIdentityField(view_name="api:loadawareschedulingargs-detail")
    resource_weights = ResourceMapField()
    usage_thresholds = ResourceMapField()
    prod_usage_thresholds = ResourceMapField()
    estimated_scaling_factors = ResourceMapField()
    aggregated_usage_thresholds = ResourceMapField()
    aggregated_usage_aggregation_type = serializers.ChoiceField(
        choices=["", *AGGREGATION_TYPES], required=False, allow_blank=True
    )
    aggregated_score_aggregation_type = serializers.ChoiceField(
        choices=["", *AGGREGATION_TYPES], required=False, allow_blank=True
    )
    supported_resources = serializers.ListField(
        child=_name_field(), required=False, allow_null=True, max_length=64
    )
    effective = serializers.SerializerMethodField(
        help_text="The args as Koordinator runs them: these values with its defaults applied "
        "(v1 JSON names)."
    )

    class Meta:
        model = LoadAwareSchedulingArgs
        fields = [
            "id",
            "url",
            "profile",
            "version",
            "plugin_config_index",
            "node_metric_expiration_seconds",
            "filter_expired_node_metrics",
            "enable_schedule_when_node_metrics_expired",
            "resource_weights",
            "dominant_resource_weight",
            "usage_thresholds",
            "prod_usage_thresholds",
            "prod_usage_include_sys",
            "score_according_prod_usage",
            "estimator",
            "estimated_scaling_factors",
            "estimated_seconds_after_pod_scheduled",
            "estimated_seconds_after_initialized",
            "allow_customize_estimation",
            "aggregated_usage_thresholds",
            "aggregated_usage_aggregation_type",
            "aggregated_usage_aggregated_duration",
            "aggregated_score_aggregation_type",
            "aggregated_score_aggregated_duration",
            "supported_resources",
            "effective",
            "created",
            "updated",
        ]
        read_only_fields = COMMON_READ_ONLY

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_effective(self, args: LoadAwareSchedulingArgs) -> dict[str, Any]:
        return default_args(args.to_args())


# -- node threshold and collect policies --------------------------------------------------------


class NodeThresholdPolicySerializer(
    StrictMixin, VersionedSerializerMixin, ModelSerializer[NodeThresholdPolicy]
):
    parent_field = "cluster"
    url = serializers.HyperlinkedIdentityField(view_name="api:nodethresholdpolicy-detail")
    node_names = serializers.ListField(child=_name_field(), required=False, max_length=10_000)
    node_selector = LabelSelectorSerializer(required=False, allow_null=True)
    usage_thresholds = ResourceMapField()
    prod_usage_thresholds = ResourceMapField()
    aggregated_usage_thresholds = ResourceMapField()
    aggregated_usage_aggregation_type = serializers.ChoiceField(
        choices=["", *AGGREGATION_TYPES], required=False, allow_blank=True
    )
    annotation = serializers.SerializerMethodField(
        help_text="The scheduling.koordinator.sh/usage-thresholds value this policy sets."
    )
    warnings = serializers.SerializerMethodField(
        help_text="In the answer to a create or update: what is valid but likely wrong "
        "(resources no node of the newest snapshot reports). Empty on reads."
    )

    class Meta:
        model = NodeThresholdPolicy
        fields = [
            "id",
            "url",
            "cluster",
            "version",
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
            "annotation",
            "warnings",
            "created",
            "updated",
        ]
        read_only_fields = COMMON_READ_ONLY
        # Uniqueness of (cluster, name) is checked by the service, with a field error.
        validators: ClassVar[list[Any]] = []

    def validate_node_selector(self, value: Any) -> Any:
        return plain(value) if value is not None else None

    def get_annotation(self, policy: NodeThresholdPolicy) -> str | None:
        return annotation_value(policy)

    def get_warnings(self, obj: NodeThresholdPolicy) -> list[str]:
        return threshold_warnings(obj) if self.context.get("warn") else []


class CollectPolicySerializer(
    StrictMixin, VersionedSerializerMixin, ModelSerializer[NodeMetricCollectPolicy]
):
    parent_field = "cluster"
    url = serializers.HyperlinkedIdentityField(view_name="api:nodemetriccollectpolicy-detail")
    node_selector = LabelSelectorSerializer(required=False, allow_null=True)

    class Meta:
        model = NodeMetricCollectPolicy
        fields = [
            "id",
            "url",
            "cluster",
            "version",
            "name",
            "description",
            "is_default",
            "node_selector",
            "priority",
            "report_interval_seconds",
            "aggregate_duration_seconds",
            "created",
            "updated",
        ]
        read_only_fields = COMMON_READ_ONLY
        validators: ClassVar[list[Any]] = []

    def validate_node_selector(self, value: Any) -> Any:
        return plain(value) if value is not None else None


# -- actions ------------------------------------------------------------------------------------


class ImportSerializer(StrictMixin, serializers.Serializer[Any]):
    cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    document = StrictCharField(
        max_length=512 * 1024,
        trim_whitespace=False,
        help_text="A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), YAML or JSON.",
    )
    delete_profiles = serializers.ListField(
        child=StrictCharField(max_length=253),
        required=False,
        default=list,
        max_length=1000,
        help_text="The schedulerName of each stored profile the document no longer has "
        "(default-scheduler for one that sets none): importing deletes those profiles with "
        "their plugin args and LoadAware args, and is refused unless each is listed here.",
    )


class PolicyPreviewSerializer(serializers.Serializer[Any]):
    policy = serializers.IntegerField()
    snapshot = SnapshotRefSerializer()
    at = serializers.DateTimeField()
    active = serializers.BooleanField(help_text="Whether its time window contains `at`.")
    count = serializers.IntegerField()
    nodes = serializers.ListField(child=StrictCharField())


# -- descheduler configurations -----------------------------------------------------------------


def _args_summary(args: LowNodeLoadArgs | None) -> dict[str, Any] | None:
    """LowNodeLoad's args as koord-descheduler runs them (defaulted, pools converted)."""
    if args is None:
        return None
    return {
        "paused": args.paused,
        "dry_run": args.dry_run,
        "number_of_nodes": args.number_of_nodes,
        "node_metric_expiration_seconds": args.node_metric_expiration_seconds,
        "node_fit": args.node_fit,
        "evictable_namespaces": {
            "include": list(args.evictable_include),
            "exclude": list(args.evictable_exclude),
        },
        "node_pools": [
            {
                "name": pool.name,
                "node_selector": pool.node_selector,
                "use_deviation_thresholds": pool.use_deviation_thresholds,
                "low_thresholds": pool.low,
                "high_thresholds": pool.high,
                "prod_low_thresholds": pool.prod_low,
                "prod_high_thresholds": pool.prod_high,
                "resource_weights": dict(pool.resource_weights),
                "anomaly_condition": {
                    "timeout_seconds": pool.anomaly.timeout / 10**9,
                    "consecutive_abnormalities": pool.anomaly.consecutive_abnormalities,
                    "consecutive_normalities": pool.anomaly.consecutive_normalities,
                },
            }
            for pool in args.node_pools
        ],
    }


class DeschedulerConfigurationSerializer(ModelSerializer[DeschedulerConfiguration]):
    valid = serializers.SerializerMethodField()
    validation_errors = serializers.SerializerMethodField(
        help_text="Why koord-descheduler would refuse it: field, rule and detail."
    )
    lownodeload_enabled = serializers.SerializerMethodField()
    lownodeload = serializers.SerializerMethodField(
        help_text="LowNodeLoad's args as koord-descheduler runs them: defaulted, the top-level "
        "thresholds as the first pool __default_node_pool__, pools inheriting what they omit."
    )

    class Meta:
        model = DeschedulerConfiguration
        fields = [
            "id",
            "cluster",
            "configmap",
            "source",
            "read_at",
            "version",
            "created",
            "updated",
            "valid",
            "validation_errors",
            "lownodeload_enabled",
            "lownodeload",
        ]
        read_only_fields = fields

    def _parsed(self, obj: DeschedulerConfiguration) -> descheduler.ParsedDescheduler:
        cache: dict[int, descheduler.ParsedDescheduler] = self.__dict__.setdefault(
            "_parsed_rows", {}
        )
        if obj.pk not in cache:
            cache[obj.pk] = descheduler.parse_descheduler(obj)
        return cache[obj.pk]

    def get_valid(self, obj: DeschedulerConfiguration) -> bool:
        return self._parsed(obj).valid

    def get_validation_errors(self, obj: DeschedulerConfiguration) -> list[dict[str, str]]:
        parsed = self._parsed(obj)
        errors = [e.to_dict() for e in parsed.errors]
        if parsed.unreadable:
            errors.append({"field": "", "type": "Unreadable", "detail": parsed.unreadable})
        return errors

    def get_lownodeload_enabled(self, obj: DeschedulerConfiguration) -> bool:
        config = self._parsed(obj).config
        return bool(config and config.lownodeload_enabled)

    def get_lownodeload(self, obj: DeschedulerConfiguration) -> dict[str, Any] | None:
        config = self._parsed(obj).config
        return _args_summary(config.lownodeload if config else None)


class DeschedulerRenderSerializer(serializers.Serializer[Any]):
    namespace = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField()
    text = serializers.CharField(help_text="The ConfigMap key's text, exactly as stored.")


class DeschedulerImportSerializer(serializers.Serializer[Any]):
    cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    document = StrictCharField(
        max_length=1_000_000, trim_whitespace=False, help_text="The document, YAML or JSON."
    )


class LowNodeLoadArgsSerializer(serializers.Serializer[Any]):
    configuration = serializers.IntegerField()
    version = serializers.IntegerField()
    edited = serializers.BooleanField(help_text="Changed here and not pushed yet.")
    args = serializers.JSONField(help_text="LowNodeLoad's args as written in the document.")
