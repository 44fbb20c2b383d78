"""Filtering the sync job history."""

import django_filters

from policy.core.filters import IdFilter, UtcDateTimeFilter
from policy.sync.models import SyncJob, SyncJobKind, SyncJobStatus, SyncJobTrigger


class SyncJobFilterSet(django_filters.FilterSet):
    cluster = IdFilter()
    kind = django_filters.ChoiceFilter(choices=SyncJobKind.choices)
    status = django_filters.ChoiceFilter(choices=SyncJobStatus.choices)
    trigger = django_filters.ChoiceFilter(choices=SyncJobTrigger.choices)
    created_after = UtcDateTimeFilter(field_name="created", lookup_expr="gte")
    created_before = UtcDateTimeFilter(field_name="created", lookup_expr="lt")

    class Meta:
        model = SyncJob
        fields = ["cluster", "kind", "status", "trigger"]
