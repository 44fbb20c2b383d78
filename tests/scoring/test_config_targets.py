"""Scheduler targets: parsing, inference from a document, and name checks against the target's
registry (an error where the registry is complete, a warning where it is not)."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.config import Target, check_configuration, infer_target, parse_target
from scoring.config.registries import (
    SCHEDULER_PLUGINS_RELEASES,
    config_versions_of,
    in_tree_plugins,
)
from scoring.config.targets import target_from_image
from scoring.errors import INVALID, InputError

V1 = "kubescheduler.config.k8s.io/v1"


def document(*enabled: str, api_version: str = V1, point: str = "filter") -> dict[str, Any]:
    plugins = {point: {"enabled": [{"name": n} for n in enabled]}}
    return {
        "apiVersion": api_version,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "plugins": plugins}],
    }


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("koord-scheduler@1.7", Target("koord-scheduler", "1.7")),
        ("kube-scheduler@v1.28.7", Target("kube-scheduler", "1.28")),
        ("scheduler-plugins@0.35.4-devel", Target("scheduler-plugins", "0.35")),
        ("custom", Target("custom")),
    ],
)
def test_parse_target(text: str, target: Target) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize(
    ("text", "message"),
    [("volcano@1.0", "unknown flavor 'volcano'"), ("kube-scheduler@latest", "not major.minor")],
)
def test_parse_target_names_the_rule(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_target(text)


@pytest.mark.parametrize(
    ("target", "minor"),
    [
        (Target("koord-scheduler", "1.7"), 28),
        (Target("koord-scheduler", "1.8"), 35),
        (Target("scheduler-plugins", "0.31"), 31),
        (Target("kube-scheduler", "1.24"), 24),
        (Target("koord-scheduler", "1.2"), None),
    ],
)
def test_kubernetes_minor_of_a_target(target: Target, minor: int | None) -> None:
    assert target.kubernetes_minor == minor


@pytest.mark.parametrize(
    ("api_version", "names", "expected"),
    [
        ("v1", [], "kube-scheduler@1.35"),
        ("v1beta3", ["PodTopologySpread"], "kube-scheduler@1.28"),
        ("v1beta2", ["SelectorSpread"], "kube-scheduler@1.27"),
        ("v1beta3", ["LoadAwareScheduling", "Reservation"], "koord-scheduler@1.7"),
        ("v1", ["LoadAwareScheduling", "SchedulingHint"], "koord-scheduler@1.8"),
        ("v1beta2", ["Reservation"], "koord-scheduler@1.4"),
        (
            "v1beta3",
            [("queueSort", "Coscheduling"), ("filter", "Reservation")],
            "koord-scheduler@1.6",
        ),
        (
            "v1beta3",
            [("preEnqueue", "Coscheduling"), ("filter", "Reservation")],
            "koord-scheduler@1.7",
        ),
        ("v1", ["NodeResourceTopologyMatch"], "scheduler-plugins@0.35"),
        ("v1beta2", ["Coscheduling"], "scheduler-plugins@0.27"),
        ("v1", ["Coscheduling", "CapacityScheduling"], "scheduler-plugins@0.35"),
        ("v1", ["LoadAwareScheduling", "NodeResourceTopologyMatch"], "custom@1.35"),
        ("v1", ["LimitAware"], "custom@1.35"),
        ("v1", ["NoSuchPlugin"], "kube-scheduler@1.35"),
        ("v1", ["NoSuchPlugin", "Reservation"], "koord-scheduler@1.8"),
        ("v1", ["NoSuchPlugin", "Reservation", "LimitAware"], "custom@1.35"),
    ],
)
def test_infer_target(api_version: str, names: list[str], expected: str) -> None:
    assert str(infer_target(api_version, names)) == expected


def test_args_of_a_plugin_that_is_not_enabled_do_not_change_the_target() -> None:
    doc = document("LoadAwareScheduling")
    doc["profiles"][0]["pluginConfig"] = [{"name": "SomeoneElsesPlugin", "args": {"a": 1}}]
    check = check_configuration(doc)
    assert str(check.target) == "koord-scheduler@1.8"
    assert check.valid


def test_in_tree_registry_follows_releases() -> None:
    assert "NodeLabel" in in_tree_plugins(22)
    assert "NodeLabel" not in in_tree_plugins(23)
    assert "SelectorSpread" in in_tree_plugins(28)
    assert "SelectorSpread" not in in_tree_plugins(29)
    assert "EBSLimits" in in_tree_plugins(31)
    assert "EBSLimits" not in in_tree_plugins(32)
    assert "SchedulingGates" not in in_tree_plugins(25)
    assert "SchedulingGates" in in_tree_plugins(26)


def test_config_versions_per_release() -> None:
    assert config_versions_of(19) == ("v1beta1",)
    assert config_versions_of(20) == ("v1beta1",)
    assert config_versions_of(22) == ("v1beta1", "v1beta2")
    assert config_versions_of(23) == ("v1beta2", "v1beta3")
    assert config_versions_of(25) == ("v1beta2", "v1beta3", "v1")
    assert config_versions_of(28) == ("v1beta3", "v1")
    assert config_versions_of(29) == ("v1",)
    assert "SySched" not in SCHEDULER_PLUGINS_RELEASES["0.27"].plugins
    assert "Peaks" in SCHEDULER_PLUGINS_RELEASES["0.31"].plugins
    coscheduling = SCHEDULER_PLUGINS_RELEASES["0.25"].plugins["Coscheduling"]
    assert coscheduling.implements("postBind")
    assert not SCHEDULER_PLUGINS_RELEASES["0.26"].plugins["Coscheduling"].implements("postBind")


def test_unknown_name_is_an_error_where_the_registry_is_complete() -> None:
    check = check_configuration(document("Foo"), target=Target("kube-scheduler", "1.30"))
    assert [(e.field, e.type, e.detail) for e in check.errors] == [
        ("profiles[0].plugins.filter.enabled[0]", INVALID, 'FilterPlugin "Foo" does not exist')
    ]
    assert check.warnings == []
    assert check.registry.complete


@pytest.mark.parametrize(
    "target", [Target("custom", "1.30"), Target("koord-scheduler", "1.2"), Target("custom")]
)
def test_unknown_name_is_a_warning_where_the_registry_is_not_complete(target: Target) -> None:
    check = check_configuration(document("Foo"), target=target)
    assert check.errors == []
    assert [(w.field, w.type, w.detail) for w in check.warnings] == [
        ("profiles[0].plugins.filter.enabled[0]", INVALID, 'FilterPlugin "Foo" does not exist')
    ]
    assert check.config is not None
    assert check.config.warnings == tuple(check.warnings)
    assert "Foo" in check.config.profiles[0].plugin_names("filter")


def test_unknown_name_in_multi_point_is_a_warning_and_not_expanded() -> None:
    check = check_configuration(document("Foo", point="multiPoint"), target=Target("custom"))
    assert [w.field for w in check.warnings] == ["profiles[0].plugins.multiPoint.enabled[19]"]
    assert check.config is not None
    profile = check.config.profiles[0]
    assert all("Foo" not in profile.plugin_names(point) for point in profile.plugins)


def test_release_registry_knows_when_a_plugin_arrived() -> None:
    doc = document("SchedulingHint", point="preFilter")
    assert check_configuration(doc, target=Target("koord-scheduler", "1.7")).valid
    check = check_configuration(doc, target=Target("koord-scheduler", "1.6"))
    assert [e.detail for e in check.errors] == ['PreFilterPlugin "SchedulingHint" does not exist']


def test_an_extension_point_mismatch_is_a_warning_where_points_are_not_known() -> None:
    """An unknown koord-scheduler release: its plugins' points are the union of the known
    releases', not certain."""
    doc = document("DefaultPreBind", point="filter")
    check = check_configuration(doc, target=Target("koord-scheduler", "1.3"))
    assert check.valid
    assert [w.detail for w in check.warnings] == [
        'plugin "DefaultPreBind" does not extend FilterPlugin plugin'
    ]
    check = check_configuration(doc, target=Target("koord-scheduler", "1.7"))
    assert [e.detail for e in check.errors] == [
        'plugin "DefaultPreBind" does not extend FilterPlugin plugin'
    ]


def test_a_verified_extension_point_mismatch_is_an_error() -> None:
    check = check_configuration(
        document("NodeResourcesAllocatable", point="filter"),
        target=Target("scheduler-plugins", "0.35"),
    )
    assert [e.detail for e in check.errors] == [
        'plugin "NodeResourcesAllocatable" does not extend FilterPlugin plugin'
    ]


def test_a_target_that_cannot_read_the_version_is_an_input_error() -> None:
    doc = document(api_version="kubescheduler.config.k8s.io/v1beta3")
    with pytest.raises(InputError, match=r"by kube-scheduler@1\.29 .*removed in Kubernetes 1\.29"):
        check_configuration(doc, target=Target("kube-scheduler", "1.29"))
    assert check_configuration(doc, target=Target("kube-scheduler", "1.28")).valid


@pytest.mark.parametrize(
    ("image", "target"),
    [
        ("ghcr.io/koordinator-sh/koord-scheduler:v1.7.0", "koord-scheduler@1.7"),
        ("registry.local:5000/koord-scheduler:1.5.0@sha256:abc", "koord-scheduler@1.5"),
        ("registry.k8s.io/scheduler-plugins/kube-scheduler:v0.35.1", "scheduler-plugins@0.35"),
        ("registry.k8s.io/kube-scheduler:v1.30.2", "kube-scheduler@1.30"),
        ("registry.k8s.io/kube-scheduler:latest", None),
        ("registry.local:5000/kube-scheduler", None),
        ("example.com/my-scheduler:v1.2.3", None),
    ],
)
def test_a_scheduler_image_names_its_build(image: str, target: str | None) -> None:
    found = target_from_image(image)
    assert (str(found) if found else None) == target
