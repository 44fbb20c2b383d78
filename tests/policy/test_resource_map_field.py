"""The resource map field of the policy editors (thresholds, weights, scaling factors): rows of
a resource and an integer, cleaned to the same dict the services take; errors on the row at
fault; a warning for resources no node reports."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import QueryDict

from policy.clusters.models import ClusterSnapshot
from policy.web import pages
from policy.web.forms import policies as pf

NODES_REPORT = ["cpu", "ephemeral-storage", "memory", "nvidia.com/gpu", "pods"]


def rows(field: str, *pairs: tuple[str, str]) -> dict[str, list[str]]:
    return {
        f"{field}-resource": [name for name, _ in pairs],
        f"{field}-value": [value for _, value in pairs],
    }


def threshold_form(resources: list[str] | None = NODES_REPORT, **maps: Any) -> Any:
    data: dict[str, Any] = {"name": "hot", "priority": "0", "node_selector": "{}"}
    for field, pairs in maps.items():
        data.update(rows(field, *pairs) if isinstance(pairs, list) else {field: pairs})
    return pf.NodeThresholdPolicyForm(data, resources=resources)


# -- rows in, the services' dict out ------------------------------------------------------------


def test_rows_clean_to_the_map_and_blank_rows_are_no_entry() -> None:
    form = threshold_form(
        usage_thresholds=[("cpu", "65"), ("", ""), (" memory ", " 95 "), ("", "")]
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["usage_thresholds"] == {"cpu": 65, "memory": 95}
    assert form.cleaned_data["prod_usage_thresholds"] is None  # no rows posted


def test_only_blank_rows_are_no_map() -> None:
    form = threshold_form(usage_thresholds=[("", ""), ("", "")])
    assert form.is_valid(), form.errors
    assert form.cleaned_data["usage_thresholds"] is None


def test_rows_read_from_a_query_dict_as_posted() -> None:
    data = QueryDict(mutable=True)
    data.update({"name": "hot", "priority": "0", "node_selector": "{}"})
    data.setlist("usage_thresholds-resource", ["cpu", "nvidia.com/gpu", ""])
    data.setlist("usage_thresholds-value", ["70", "+50", ""])
    form = pf.NodeThresholdPolicyForm(data, resources=NODES_REPORT)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["usage_thresholds"] == {"cpu": 70, "nvidia.com/gpu": 50}


def test_yaml_text_from_a_script_gives_the_same_dict_as_rows() -> None:
    text = threshold_form(usage_thresholds="cpu: 65\nmemory: 95")
    by_rows = threshold_form(usage_thresholds=[("cpu", "65"), ("memory", "95")])
    assert text.is_valid() and by_rows.is_valid()
    assert text.cleaned_data["usage_thresholds"] == by_rows.cleaned_data["usage_thresholds"]


def test_yaml_text_keeps_an_explicit_empty_map() -> None:
    form = threshold_form(usage_thresholds="{}")
    assert form.is_valid(), form.errors
    assert form.cleaned_data["usage_thresholds"] == {}


# -- errors on the row at fault -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "row", "message"),
    [
        ([("cpu", "65"), ("memory", "lots")], 1, 'memory: must be an integer, not "lots".'),
        (
            [("cpu", "65"), ("memory", "")],
            1,
            "memory: give a value (an integer), or clear the row.",
        ),
        ([("", "70")], 0, "Row 1: give the resource the value 70 is for."),
        ([("cpu", "65"), ("cpu", "70")], 1, "Row 2: cpu is given twice (also row 1)."),
        (
            [("cpu", "65"), ("bad name", "5")],
            1,
            "bad name: not a resource name: name part must consist of alphanumeric characters",
        ),
        (
            [("cpu", "1e3")],
            0,
            'cpu: must be an integer, not "1e3".',
        ),
    ],
)
def test_a_bad_row_is_an_error_on_that_row(
    pairs: list[tuple[str, str]], row: int, message: str
) -> None:
    form = threshold_form(usage_thresholds=[*pairs, ("", "")])
    assert not form.is_valid()
    [error] = form.errors["usage_thresholds"]
    assert error.startswith(message)
    bound = form["usage_thresholds"]
    assert [r.errors for r in bound.rows][row] == [error]
    assert sum(len(r.errors) for r in bound.rows) == 1
    assert bound.field_errors == []  # said on the row, not again on the field
    part = "resource" if "name" in message or message.startswith("Row 1: give") else "value"
    assert bound.id_for_label == f"id_usage_thresholds_{row}_{part}"  # the summary's link
    assert [(r.resource, r.value) for r in bound.rows[: len(pairs)]] == [
        (name.strip(), value) for name, value in pairs
    ]  # the input is kept


def test_a_services_rule_lands_on_the_resource_it_names() -> None:
    """Koordinator's range rules are the services' (the engine's validators); the view puts
    their message on the field, and the row of the resource named shows it."""
    form = threshold_form(usage_thresholds=[("memory", "90"), ("cpu", "150")])
    assert form.is_valid()
    rule = "resource Threshold of cpu should be less than 100, got 150"
    form.add_error("usage_thresholds", rule)
    bound = form["usage_thresholds"]
    assert [r.errors for r in bound.rows[:2]] == [[], [rule]]
    form.add_error("usage_thresholds", "something about the whole map")
    assert bound.field_errors == ["something about the whole map"]


def test_too_many_resources_is_the_validators_rule_on_the_field() -> None:
    pairs = [(f"example.com/r{i}", "1") for i in range(65)]
    form = threshold_form(usage_thresholds=pairs)
    assert not form.is_valid()
    assert form.errors["usage_thresholds"] == ["At most 64 resources."]
    assert form["usage_thresholds"].field_errors == ["At most 64 resources."]
    assert form["usage_thresholds"].id_for_label == "id_usage_thresholds"


def test_yaml_errors_stay_on_the_field() -> None:
    form = threshold_form(usage_thresholds="cpu: [")
    assert not form.is_valid()
    assert form.errors["usage_thresholds"][0].startswith("Not valid YAML")
    assert form["usage_thresholds"].field_errors == form.errors["usage_thresholds"]


# -- the rows shown -----------------------------------------------------------------------------


def test_an_unbound_form_shows_the_stored_map_then_blank_rows() -> None:
    form = pf.NodeThresholdPolicyForm(initial={"usage_thresholds": {"cpu": 65, "memory": 95}})
    shown = [(r.resource, r.value) for r in form["usage_thresholds"].rows]
    assert shown == [("cpu", "65"), ("memory", "95"), *[("", "")] * pf.BLANK_ROWS]
    assert [(r.resource, r.value) for r in form["prod_usage_thresholds"].rows] == [
        ("", "")
    ] * pf.BLANK_ROWS


def test_the_picker_offers_core_resources_then_what_nodes_report() -> None:
    form = pf.NodeThresholdPolicyForm(resources=NODES_REPORT)
    assert form["usage_thresholds"].picks == [
        "cpu",
        "memory",
        "ephemeral-storage",
        "nvidia.com/gpu",
        "pods",
    ]
    assert pf.NodeThresholdPolicyForm()["usage_thresholds"].picks == list(pf.CORE_PICKS)


def test_units_say_what_the_number_is() -> None:
    form = pf.LoadAwareArgsForm()
    assert form["usage_thresholds"].unit == "Percent"
    assert form["resource_weights"].unit == "Weight"


# -- resources no node reports ------------------------------------------------------------------


def test_a_resource_no_node_reports_is_warned_about_not_refused() -> None:
    form = threshold_form(usage_thresholds=[("cpuu", "70"), ("memory", "90")])
    assert form.is_valid()
    assert form.cleaned_data["usage_thresholds"] == {"cpuu": 70, "memory": 90}
    message = (
        "Usage thresholds: no node of the newest snapshot reports 'cpuu' (a typo?), so this "
        "entry is never used. A non-empty map replaces the LoadAware args' map: with no cpu "
        "entry here, the cpu check would be off."
    )
    assert form.resource_warnings() == {"usage_thresholds": [("cpuu", message)]}
    assert form.warning_messages() == [message]
    assert [r.warnings for r in form["usage_thresholds"].rows[:2]] == [[message], []]


def test_warnings_name_what_each_map_replaces() -> None:
    form = pf.LoadAwareArgsForm(
        {
            **rows("resource_weights", ("cpu", "1"), ("memry", "1")),
            **rows("estimated_scaling_factors", ("gpu", "80")),
            **rows("usage_thresholds", ("cpuu", "65"), ("memory", "95")),
            **rows("prod_usage_thresholds", ("cpu", "60"), ("memroy", "80")),
        },
        resources=NODES_REPORT,
    )
    assert form.is_valid(), form.errors
    assert form.warning_messages() == [
        "Usage thresholds (usageThresholds): no node of the newest snapshot reports 'cpuu' "
        "(a typo?), so this entry is never used. A non-empty map replaces the defaults: with "
        "no cpu entry here, the cpu check would be off.",
        # LoadAware has no default prod thresholds: nothing is replaced.
        "Prod usage thresholds (prodUsageThresholds): no node of the newest snapshot reports "
        "'memroy' (a typo?), so this entry is never used.",
        "Resource weights (resourceWeights): no node of the newest snapshot reports 'memry' "
        "(a typo?), so this entry is never used. A non-empty map replaces the defaults: with "
        "no memory entry here, memory would not be scored.",
        # Estimated scaling factors are merged with the defaults, not replaced.
        "Estimated scaling factors (estimatedScalingFactors): no node of the newest snapshot "
        "reports 'gpu' (a typo?), so this entry is never used.",
    ]


def test_an_edit_page_warns_about_the_stored_map_at_once() -> None:
    form = pf.NodeThresholdPolicyForm(
        initial={"usage_thresholds": {"cpu": 60, "gpuu": 5}}, resources=NODES_REPORT
    )
    [(resource, message)] = form.resource_warnings()["usage_thresholds"]
    assert resource == "gpuu"
    assert message == (
        "Usage thresholds: no node of the newest snapshot reports 'gpuu' (a typo?), so this "
        "entry is never used. A non-empty map replaces the LoadAware args' map: with no memory "
        "entry here, the memory check would be off."
    )
    assert [bool(r.warnings) for r in form["usage_thresholds"].rows[:2]] == [False, True]


def test_without_the_clusters_resources_nothing_is_warned_about() -> None:
    form = threshold_form(resources=None, usage_thresholds=[("cpuu", "70")])
    assert form.is_valid()
    assert form.resource_warnings() == {}


@pytest.mark.django_db
def test_the_resources_come_from_the_nodes_of_the_newest_snapshot(
    demo_snapshot: ClusterSnapshot,
) -> None:
    reported = pages.reported_resources(demo_snapshot.cluster)
    assert reported is not None
    assert {"cpu", "memory", "pods"} <= set(reported)
    assert "cpuu" not in reported
    demo_snapshot.cluster.snapshots.all().delete()
    assert pages.reported_resources(demo_snapshot.cluster) is None
