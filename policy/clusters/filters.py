"""Filtering the cluster list."""

import django_filters

from policy.clusters.models import Cluster


class ClusterFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="exact")
    name__ic = django_filters.CharFilter(field_name="name", lookup_expr="icontains")

    class Meta:
        model = Cluster
        fields = ["name", "kind", "push_mode"]
