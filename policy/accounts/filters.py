"""Filtering the audit trail: policy changes and refused requests."""

import django_filters

from policy.accounts.models import AuthorizationFailure, PolicyChange
from policy.core.choices import ChangeAction, ChangeSource
from policy.core.filters import IdFilter, UtcDateTimeFilter


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
