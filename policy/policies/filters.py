"""Filtering the policy objects: configurations, profiles, LoadAware args, node policies."""

import django_filters

from policy.clusters.models import Cluster
from policy.core.filters import IdFilter
from policy.policies.models import (
    DeschedulerConfiguration,
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)


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


class DeschedulerConfigurationFilterSet(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all())

    class Meta:
        model = DeschedulerConfiguration
        fields = ["cluster"]
