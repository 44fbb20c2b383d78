"""Filtering decisions (one FilterSet for the API and the decisions page) and what-if runs."""

import django_filters

from policy.core.choices import Agreement, DecisionOutcome, DecisionSource, WhatIfStatus
from policy.core.filters import IdFilter, UtcDateTimeFilter
from policy.decisions.models import PlacementDecision, WhatIfRun


class DecisionFilterSet(django_filters.FilterSet):
    pod = django_filters.CharFilter(field_name="pod_name", help_text="Pod name (exact).")
    namespace = django_filters.CharFilter(field_name="pod_namespace")
    node = django_filters.CharFilter(field_name="selected_node")
    profile = django_filters.CharFilter(field_name="profile")
    outcome = django_filters.ChoiceFilter(choices=DecisionOutcome.choices)
    source = django_filters.ChoiceFilter(choices=DecisionSource.choices)
    agreement = django_filters.ChoiceFilter(
        choices=Agreement.choices,
        help_text="Decisions of the cluster's scheduler: does the engine agree?",
    )
    created_after = UtcDateTimeFilter(field_name="created", lookup_expr="gte")
    created_before = UtcDateTimeFilter(field_name="created", lookup_expr="lt")

    class Meta:
        model = PlacementDecision
        fields = [
            "cluster",
            "pod",
            "namespace",
            "node",
            "profile",
            "outcome",
            "source",
            "agreement",
        ]


class WhatIfFilterSet(django_filters.FilterSet):
    cluster = IdFilter()
    status = django_filters.ChoiceFilter(choices=WhatIfStatus.choices)

    class Meta:
        model = WhatIfRun
        fields = ["cluster", "status"]
