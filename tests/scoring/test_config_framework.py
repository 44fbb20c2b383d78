"""Startup (NewFramework) errors, as field errors with upstream's messages."""

from __future__ import annotations

from typing import Any

from scoring.config import validate_configuration
from scoring.config.expansion import expand_profile
from scoring.config.framework_checks import check_profile, repeated_plugin_config
from scoring.errors import FieldError

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def errors_for(plugins: dict[str, Any], **profile: Any) -> list[tuple[str, str, str]]:
    config, errors = validate_configuration(
        {**HEADER, "profiles": [{"plugins": plugins, **profile}]}
    )
    assert (config is None) == bool(errors)
    return [(e.field, e.type, e.detail) for e in errors]


def test_unknown_plugin_at_an_extension_point() -> None:
    assert errors_for({"filter": {"enabled": [{"name": "Foo"}]}}) == [
        (
            "profiles[0].plugins.filter.enabled[0]",
            "FieldValueInvalid",
            'FilterPlugin "Foo" does not exist',
        )
    ]


def test_unknown_plugin_in_multi_point_is_named_by_the_first_expanded_point() -> None:
    assert errors_for({"multiPoint": {"enabled": [{"name": "Foo"}]}}) == [
        (
            "profiles[0].plugins.multiPoint.enabled[19]",
            "FieldValueInvalid",
            'PreFilterPlugin "Foo" does not exist',
        )
    ]
    # preFilter skips expansion ('*'), so filter is the first point that looks at multiPoint.
    errors = errors_for(
        {"multiPoint": {"enabled": [{"name": "Foo"}]}, "preFilter": {"disabled": [{"name": "*"}]}}
    )
    assert errors == [
        (
            "profiles[0].plugins.multiPoint.enabled[19]",
            "FieldValueInvalid",
            'FilterPlugin "Foo" does not exist',
        )
    ]


def test_plugin_that_does_not_extend_the_point() -> None:
    assert errors_for({"bind": {"enabled": [{"name": "NodeName"}]}}) == [
        (
            "profiles[0].plugins.bind.enabled[0]",
            "FieldValueInvalid",
            'plugin "NodeName" does not extend BindPlugin plugin',
        )
    ]


def test_plugin_enabled_twice_at_a_point() -> None:
    assert errors_for(
        {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]}}
    ) == [
        (
            "profiles[0].plugins.score.enabled[1]",
            "FieldValueDuplicate",
            'plugin "ImageLocality" already registered as "ScorePlugin"',
        )
    ]


def test_plugin_enabled_twice_in_multi_point() -> None:
    errors = errors_for(
        {"multiPoint": {"enabled": [{"name": "LimitAware"}, {"name": "LimitAware"}]}}
    )
    assert errors == [
        (
            "profiles[0].plugins.multiPoint.enabled[20]",
            "FieldValueDuplicate",
            'plugin "LimitAware" already registered as "PreFilterPlugin"',
        )
    ]


def test_default_plugin_enabled_twice_in_multi_point() -> None:
    # The merge replaces the default with the last entry and appends the first one.
    errors = errors_for(
        {
            "multiPoint": {
                "enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality", "weight": 5}]
            }
        }
    )
    assert errors == [
        (
            "profiles[0].plugins.multiPoint.enabled[19]",
            "FieldValueDuplicate",
            'plugin "ImageLocality" already registered as "ScorePlugin"',
        )
    ]


def test_queue_sort_must_be_exactly_one() -> None:
    none = errors_for({"multiPoint": {"disabled": [{"name": "PrioritySort"}]}})
    assert none == [
        (
            "profiles[0].plugins.queueSort",
            "FieldValueRequired",
            "only one queue sort plugin required for profile with scheduler name "
            '"default-scheduler", but got 0',
        )
    ]
    # A second queue sort at queueSort while PrioritySort stays in multiPoint: validation passes,
    # the framework gets two (the gotcha of the upstream validation test's "good" config).
    two = errors_for({"queueSort": {"enabled": [{"name": "CustomSort"}]}})
    assert two == [
        (
            "profiles[0].plugins.queueSort.enabled[0]",
            "FieldValueInvalid",
            'QueueSortPlugin "CustomSort" does not exist',
        ),
        (
            "profiles[0].plugins.queueSort",
            "FieldValueInvalid",
            "only one queue sort plugin required for profile with scheduler name "
            '"default-scheduler", but got 2',
        ),
    ]


def test_at_least_one_bind_plugin() -> None:
    assert errors_for({"bind": {"disabled": [{"name": "*"}]}}) == [
        (
            "profiles[0].plugins.bind",
            "FieldValueRequired",
            "at least one bind plugin is needed for profile with scheduler name "
            '"default-scheduler"',
        )
    ]


def test_every_startup_error_is_reported() -> None:
    errors = errors_for(
        {
            "filter": {"enabled": [{"name": "Foo"}, {"name": "DefaultBinder"}]},
            "bind": {"disabled": [{"name": "*"}]},
        }
    )
    assert [e[0] for e in errors] == [
        "profiles[0].plugins.filter.enabled[0]",
        "profiles[0].plugins.filter.enabled[1]",
        "profiles[0].plugins.bind",
    ]


def test_repeated_plugin_config_message() -> None:
    profile = {"pluginConfig": [{"name": "A"}, {"name": "B"}, {"name": "A"}]}
    errors = repeated_plugin_config(profile, "profiles[0]")
    assert errors == [
        FieldError(
            "profiles[0].pluginConfig[2]",
            "FieldValueDuplicate",
            "repeated config for plugin A",
            "A",
        )
    ]


def test_startup_error_repeating_a_validation_error_is_not_reported_twice() -> None:
    # Validation reports the duplicate pluginConfig; kube-scheduler stops there, so the
    # framework's "repeated config" on the same field is not added.
    errors = errors_for(
        {}, pluginConfig=[{"name": "InterPodAffinity"}, {"name": "InterPodAffinity"}]
    )
    assert errors == [
        (
            "profiles[0].pluginConfig[1]",
            "FieldValueDuplicate",
            'Duplicate value: "InterPodAffinity"',
        )
    ]


def test_check_profile_reports_the_framework_message_itself() -> None:
    expansion = check_profile(
        {
            "schedulerName": "x",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}
            },
            "pluginConfig": [{"name": "A"}, {"name": "A"}],
        },
        "profiles[3]",
    )
    assert [(e.field, e.detail) for e in expansion.errors] == [
        ("profiles[3].pluginConfig[1]", "repeated config for plugin A")
    ]
    assert expansion.points["queueSort"] == ["PrioritySort"]
    assert expansion.points["bind"] == ["DefaultBinder"]


def test_unknown_plugin_at_a_point_still_occupies_it() -> None:
    expansion = expand_profile(
        {
            "bind": {"enabled": [{"name": "CustomBind", "weight": 4}]},
            "score": {"enabled": [{"name": "S", "weight": 6}]},
        },
        "profiles[0]",
    )
    assert expansion.points["bind"] == ["CustomBind"]
    assert expansion.points["score"] == ["S"]
    assert expansion.score_weights == {"S": 6}
    assert [e.detail for e in expansion.errors] == [
        'ScorePlugin "S" does not exist',
        'BindPlugin "CustomBind" does not exist',
    ]


def test_removed_plugin_in_multi_point_is_a_startup_error_not_a_validation_error() -> None:
    errors = errors_for({"multiPoint": {"enabled": [{"name": "EBSLimits"}]}})
    assert errors == [
        (
            "profiles[0].plugins.multiPoint.enabled[19]",
            "FieldValueInvalid",
            'PreFilterPlugin "EBSLimits" does not exist',
        )
    ]


def test_removed_plugin_at_a_point_is_a_validation_error() -> None:
    errors = errors_for({"filter": {"enabled": [{"name": "AzureDiskLimits"}]}})
    assert errors == [
        (
            "profiles[0].plugins.filter.enabled[0]",
            "FieldValueInvalid",
            'was invalid in version "kubescheduler.config.k8s.io/v1" '
            '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        )
    ]
    errors = errors_for({}, pluginConfig=[{"name": "GCEPDLimits"}])
    assert errors[0][:2] == ("profiles[0].pluginConfig[0]", "FieldValueInvalid")
