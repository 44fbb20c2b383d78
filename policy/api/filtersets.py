"""FilterSets shared by UI lists and the API (one per model, as NetBox does)."""

import django_filters

from policy.accounts.models import AuthorizationFailure, PolicyChange
from policy.clusters.models import Cluster
from policy.core.choices import ChangeAction, ChangeSource
from policy.core.filters import IdFilter, UtcDateTimeFilter
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)


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
