"""Multiple profiles (KEP-1451): names, one shared queue sort, profile lookup."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.config import load_configuration, validate_configuration
from scoring.config.expansion import Expansion
from scoring.config.framework_checks import check_profile_map
from scoring.errors import ConfigurationInvalid, FieldError

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def errors_of(**fields: Any) -> list[FieldError]:
    config, errors = validate_configuration({**HEADER, **fields})
    assert (config is None) == bool(errors)
    return errors


def triples(errors: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.field, e.type, e.detail) for e in errors]


def test_two_profiles_load_and_are_found_by_name() -> None:
    config = load_configuration(
        {
            **HEADER,
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "bin-packing",
                    "percentageOfNodesToScore": 30,
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "MostAllocated"}},
                        }
                    ],
                },
            ],
        }
    )
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "bin-packing"]
    packing = config.profile("bin-packing")
    assert packing is not None
    assert packing.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    default = config.profile("default-scheduler")
    assert default is not None
    assert default.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert config.profile("other") is None
    assert config.effective_percentage_of_nodes_to_score(packing) == 30
    assert config.effective_percentage_of_nodes_to_score(default) == 0


def test_scheduler_name_defaults_only_with_exactly_one_profile() -> None:
    config = load_configuration({**HEADER, "profiles": [{}]})
    assert config.profiles[0].scheduler_name == "default-scheduler"
    errors = errors_of(profiles=[{}, {"schedulerName": "b"}])
    assert triples(errors) == [
        ("profiles[0].schedulerName", "FieldValueRequired", "Required value"),
    ]


def test_no_profiles_means_the_default_profile() -> None:
    config = load_configuration({**HEADER, "profiles": []})
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]


def test_duplicate_scheduler_name_is_reported_on_the_later_profile() -> None:
    errors = errors_of(
        profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}, {"schedulerName": "a"}]
    )
    assert triples(errors) == [
        (
            "profiles[2].schedulerName",
            "FieldValueDuplicate",
            'Duplicate value: "profiles[0].schedulerName"',
        ),
    ]
    assert errors[0].bad_value == "profiles[0].schedulerName"


def test_two_unnamed_profiles() -> None:
    errors = errors_of(profiles=[{}, {}])
    assert [(e.field, e.type) for e in errors] == [
        ("profiles[0].schedulerName", "FieldValueRequired"),
        ("profiles[1].schedulerName", "FieldValueRequired"),
        ("profiles[1].schedulerName", "FieldValueDuplicate"),
    ]


def test_explicit_queue_sort_must_be_the_same_for_all_profiles() -> None:
    # Profile 0 replaces the queue sort (disabling PrioritySort in multiPoint), profile 1 keeps
    # the default: validation compares the explicit queueSort sets.
    errors = errors_of(
        profiles=[
            {
                "schedulerName": "a",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "PrioritySort"}]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                },
            },
            {"schedulerName": "b"},
        ]
    )
    assert triples(errors) == [
        ("profiles[1].plugins.queueSort", "FieldValueInvalid", "must be the same for all profiles"),
    ]


def test_more_than_one_explicit_queue_sort_in_profile_zero() -> None:
    errors = errors_of(
        profiles=[
            {
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "PrioritySort"}]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "CustomSort"}]},
                },
            }
        ]
    )
    assert ("profiles[0].plugins.queueSort.Enabled", "FieldValueInvalid") in [
        (e.field, e.type) for e in errors
    ]


def test_expanded_queue_sort_must_be_the_same_for_all_profiles() -> None:
    # Both explicit queueSort sets are empty (validation passes) but the frameworks differ:
    # the profile map rejects it at startup.
    errors = errors_of(
        profiles=[
            {"schedulerName": "a"},
            {
                "schedulerName": "b",
                "plugins": {
                    "multiPoint": {
                        "disabled": [{"name": "PrioritySort"}],
                        "enabled": [{"name": "CustomSort"}],
                    }
                },
            },
        ]
    )
    assert not [e for e in errors if e.detail == "must be the same for all profiles"]
    assert triples(errors) == [
        (
            "profiles[1].plugins.multiPoint.enabled[18]",
            "FieldValueInvalid",
            'PreFilterPlugin "CustomSort" does not exist',
        ),
        (
            "profiles[1].plugins.queueSort",
            "FieldValueRequired",
            'only one queue sort plugin required for profile with scheduler name "b", but got 0',
        ),
    ]


def test_profile_map_reports_different_queue_sort_plugins() -> None:
    def expansion(queue_sort: list[str]) -> Expansion:
        return Expansion(points={"queueSort": queue_sort})

    profiles = [{"schedulerName": "a"}, {"schedulerName": "b"}, {"schedulerName": "a"}]
    errors = check_profile_map(
        profiles, [expansion(["PrioritySort"]), expansion(["CustomSort"]), expansion(["X"])]
    )
    assert triples(errors) == [
        (
            "profiles[1].plugins.queueSort",
            "FieldValueInvalid",
            'different queue sort plugins for profile "b": "CustomSort", first: "PrioritySort"',
        ),
        (
            "profiles[2].schedulerName",
            "FieldValueDuplicate",
            'duplicate profile with scheduler name "a"',
        ),
    ]


def test_profile_map_reports_different_queue_sort_args() -> None:
    profiles: list[dict[str, Any]] = [
        {"schedulerName": "a", "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}]},
        {"schedulerName": "b"},
    ]
    sorts = [Expansion(points={"queueSort": ["PrioritySort"]}) for _ in profiles]
    assert triples(check_profile_map(profiles, sorts)) == [
        (
            "profiles[1].pluginConfig",
            "FieldValueInvalid",
            'different queue sort plugin args for profile "b"',
        )
    ]


def test_queue_sort_args_must_match_across_profiles() -> None:
    errors = errors_of(
        profiles=[
            {
                "schedulerName": "a",
                "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}],
            },
            {
                "schedulerName": "b",
                "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                "pluginConfig": [{"name": "PrioritySort", "args": {"x": 2}}],
            },
        ]
    )
    assert (
        "profiles[1].pluginConfig.args",
        "FieldValueInvalid",
        "queueSort must be the same for all profiles",
    ) in triples(errors)


def test_load_configuration_raises_with_every_error() -> None:
    with pytest.raises(ConfigurationInvalid) as info:
        load_configuration({**HEADER, "parallelism": 0, "profiles": [{}, {}]})
    fields = [e.field for e in info.value.errors]
    assert fields[0] == "parallelism"
    assert "profiles[0].schedulerName" in fields
    assert "profiles[1].schedulerName" in fields
