"""FilterSets shared by UI lists and the API (one per model, as NetBox does)."""

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms

from policy.choices import ChangeAction, ChangeSource
from policy.models import (
    AuthorizationFailure,
    Cluster,
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    PolicyChange,
    SchedulerConfiguration,
    SchedulerProfile,
)
from scoring.goint import INT64_MAX

_ID_RANGE = {"min_value": 1, "max_value": INT64_MAX}


class IdFilter(django_filters.NumberFilter):
    """An object id: a positive integer (not a decimal), within the database's range."""

    field_class = forms.IntegerField

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **{**_ID_RANGE, **kwargs})


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    """ISO 8601 date-time, converted to UTC before the query: PostgreSQL refuses UTC offsets
    beyond ±15:59, which Python accepts."""

    def filter(self, qs: Any, value: Any) -> Any:
        if isinstance(value, datetime):
            try:
                value = value.astimezone(UTC)
            except OverflowError:  # year 1 minus an offset: outside every time stamp
                return qs.none()
        return super().filter(qs, value)


class ClusterFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="exact")
    name__ic = django_filters.CharFilter(field_name="name", lookup_expr="icontains")

    class Meta:
        model = Cluster
        fields = ["name", "kind", "push_mode"]


class SchedulerConfigurationFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    cluster_name = django_filters.CharFilter(field_name="cluster__name")

    class Meta:
        model = SchedulerConfiguration
        fields = ["cluster", "cluster_name"]


class SchedulerProfileFilterSet(django_filters.FilterSet):
    configuration = IdFilter(field_name="configuration_id")
    cluster = IdFilter(field_name="configuration__cluster_id")
    scheduler_name = django_filters.CharFilter()
    scheduler_name__ic = django_filters.CharFilter(
        field_name="scheduler_name", lookup_expr="icontains"
    )

    class Meta:
        model = SchedulerProfile
        fields = ["configuration", "cluster", "scheduler_name"]


class LoadAwareArgsFilterSet(django_filters.FilterSet):
    profile = IdFilter(field_name="profile_id")
    configuration = IdFilter(field_name="profile__configuration_id")
    cluster = IdFilter(field_name="profile__configuration__cluster_id")

    class Meta:
        model = LoadAwareSchedulingArgs
        fields = ["profile", "configuration", "cluster"]


class NodeThresholdPolicyFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    name = django_filters.CharFilter()
    name__ic = django_filters.CharFilter(field_name="name", lookup_expr="icontains")

    class Meta:
        model = NodeThresholdPolicy
        fields = ["cluster", "name", "enabled"]


class CollectPolicyFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    name = django_filters.CharFilter()

    class Meta:
        model = NodeMetricCollectPolicy
        fields = ["cluster", "name", "is_default"]


class PolicyChangeFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    action = django_filters.ChoiceFilter(choices=ChangeAction.choices)
    source = django_filters.ChoiceFilter(choices=ChangeSource.choices)
    user_name = django_filters.CharFilter()
    object_type = django_filters.CharFilter(
        field_name="content_type__model", help_text="e.g. schedulerprofile"
    )
    object_id = IdFilter()
    request_id = django_filters.UUIDFilter()
    time_after = UtcDateTimeFilter(field_name="time", lookup_expr="gte")
    time_before = UtcDateTimeFilter(field_name="time", lookup_expr="lt")

    class Meta:
        model = PolicyChange
        fields = ["cluster", "action", "source", "user_name", "object_type", "object_id"]


class AuthorizationFailureFilterSet(django_filters.FilterSet):
    user_name = django_filters.CharFilter()
    source = django_filters.ChoiceFilter(choices=ChangeSource.choices)
    method = django_filters.CharFilter()

    class Meta:
        model = AuthorizationFailure
        fields = ["user_name", "source", "method"]
