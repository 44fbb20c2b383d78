"""``kubescheduler.config.k8s.io/v1beta1`` documents (kube-scheduler 1.19-1.22): decoded with
v1beta1's fields, defaulted with 1.20's default plugins and merging, the v1beta1-only resource
scorers and their args, and refused by releases that cannot read them.

Expected values come from kube-scheduler v1.20.2: ``algorithmprovider/registry.go``
(``getDefaultConfig``), ``apis/config/types.go`` (``mergePluginSets``),
``apis/config/v1beta1/defaults.go`` and ``apis/config/validation/validation_pluginargs.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from scoring.config import Target, check_configuration, load_configuration, sparse_document
from scoring.errors import InputError

GROUP = "kubescheduler.config.k8s.io"
KUBE_1_20 = Target("kube-scheduler", "1.20")


def doc(version: str = "v1beta1", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "KubeSchedulerConfiguration", **fields}


def profile_doc(**profile: Any) -> dict[str, Any]:
    return doc(profiles=[profile])


def errors(document: dict[str, Any], target: Target | None = KUBE_1_20) -> list[tuple[str, str]]:
    check = check_configuration(document, target=target)
    return [(e.field, e.detail) for e in check.errors]


def test_default_score_plugins_and_weights_are_1_20s() -> None:
    config = load_configuration(doc(), target=KUBE_1_20)
    score = [(ref.name, ref.weight) for ref in config.profiles[0].plugins["score"]]
    assert score == [
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesLeastAllocated", 1),
        ("NodeAffinity", 1),
        ("NodePreferAvoidPods", 10000),
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ]
    assert config.profiles[0].plugin_names("preScore") == (
        "InterPodAffinity",
        "PodTopologySpread",
        "TaintToleration",
    )


def test_default_args_are_v1beta1s() -> None:
    """cpu and memory at weight 1 for NodeResourcesLeastAllocated; no args for the balanced
    scorer (1.20 has no such kind) and no scoringStrategy for NodeResourcesFit."""
    config = load_configuration(doc(), target=KUBE_1_20)
    args = config.profiles[0].plugin_args
    assert args["NodeResourcesLeastAllocated"] == {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    }
    assert "NodeResourcesBalancedAllocation" not in args
    assert args["NodeResourcesFit"] == {}


def test_a_v1beta1_document_without_target_is_for_the_newest_release_reading_it() -> None:
    check = check_configuration(doc())
    assert check.valid
    assert str(check.target) == "kube-scheduler@1.22"


@pytest.mark.parametrize(
    ("version", "hint"),
    [
        ("v1", "kubescheduler.config.k8s.io/v1 arrived in Kubernetes 1.25"),
        ("v1beta2", "kubescheduler.config.k8s.io/v1beta2 arrived in Kubernetes 1.22"),
        ("v1beta3", "kubescheduler.config.k8s.io/v1beta3 arrived in Kubernetes 1.23"),
    ],
)
def test_kube_scheduler_1_20_reads_only_v1beta1(version: str, hint: str) -> None:
    with pytest.raises(InputError) as raised:
        check_configuration(doc(version), target=KUBE_1_20)
    message = str(raised.value)
    assert f'"{GROUP}/{version}" by kube-scheduler@1.20 ({hint})' in message
    assert message.endswith(f"expected {GROUP}/v1beta1")


def test_kube_scheduler_1_23_no_longer_reads_v1beta1() -> None:
    with pytest.raises(InputError, match=r"v1beta1 was removed in Kubernetes 1\.23"):
        check_configuration(doc(), target=Target("kube-scheduler", "1.23"))


def test_kube_scheduler_1_22_reads_v1beta1_and_v1beta2() -> None:
    for version in ("v1beta1", "v1beta2"):
        assert check_configuration(doc(version), target=Target("kube-scheduler", "1.22")).valid


def test_multi_point_and_pre_enqueue_are_not_v1beta1_fields() -> None:
    document = profile_doc(
        plugins={"multiPoint": {"enabled": [{"name": "NodeAffinity"}]}, "preEnqueue": {}}
    )
    assert errors(document) == [
        ("profiles[0].plugins.multiPoint", 'unknown field "multiPoint"'),
        ("profiles[0].plugins.preEnqueue", 'unknown field "preEnqueue"'),
    ]


def test_the_deprecated_addresses_are_accepted_with_any_port() -> None:
    document = doc(healthzBindAddress="0.0.0.0:10251", metricsBindAddress="0.0.0.0:10251")
    check = check_configuration(document, target=KUBE_1_20)
    assert check.valid
    assert check.config is not None
    assert "healthzBindAddress" not in check.config.document


def test_re_enabling_a_default_plugin_registers_it_twice() -> None:
    """1.20 appends enabled plugins to the defaults: changing a default weight needs the plugin
    disabled first, or NewFramework fails."""
    enabled = {"enabled": [{"name": "NodeAffinity", "weight": 5}]}
    assert errors(profile_doc(plugins={"score": enabled})) == [
        (
            "profiles[0].plugins.score.enabled[8]",
            'plugin "NodeAffinity" already registered as "ScorePlugin"',
        )
    ]
    both = {**enabled, "disabled": [{"name": "NodeAffinity"}]}
    config = load_configuration(profile_doc(plugins={"score": both}), target=KUBE_1_20)
    weights = {ref.name: ref.weight for ref in config.profiles[0].plugins["score"]}
    assert weights["NodeAffinity"] == 5


def test_node_resources_fit_does_not_score_in_1_20() -> None:
    document = profile_doc(plugins={"score": {"enabled": [{"name": "NodeResourcesFit"}]}})
    assert errors(document) == [
        (
            "profiles[0].plugins.score.enabled[8]",
            'plugin "NodeResourcesFit" does not extend ScorePlugin plugin',
        )
    ]


def test_most_allocated_replaces_least_allocated_with_its_args() -> None:
    document = profile_doc(
        plugins={
            "score": {
                "disabled": [{"name": "NodeResourcesLeastAllocated"}],
                "enabled": [{"name": "NodeResourcesMostAllocated", "weight": 3}],
            }
        },
        pluginConfig=[
            {
                "name": "NodeResourcesMostAllocated",
                "args": {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}]},
            }
        ],
    )
    assert errors(document) == [
        (
            "profiles[0].pluginConfig[0].args.resources[1].weight",
            "resource Weight of memory should be a positive value",
        )
    ]
    document["profiles"][0]["pluginConfig"][0]["args"]["resources"][1]["weight"] = 1
    config = load_configuration(document, target=KUBE_1_20)
    profile = config.profiles[0]
    assert ("NodeResourcesMostAllocated", 3) in [
        (r.name, r.weight) for r in profile.plugins["score"]
    ]
    assert "NodeResourcesLeastAllocated" not in profile.plugin_names("score")
    assert profile.plugin_args["NodeResourcesMostAllocated"] == {
        "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]
    }


def test_least_allocated_weight_over_100_is_invalid() -> None:
    document = profile_doc(
        pluginConfig=[
            {
                "name": "NodeResourcesLeastAllocated",
                "args": {"resources": [{"name": "cpu", "weight": 101}]},
            }
        ]
    )
    assert errors(document) == [
        (
            "profiles[0].pluginConfig[0].args.resources[0].weight",
            "resource Weight of cpu should be at most 100",
        )
    ]


def test_requested_to_capacity_ratio_args() -> None:
    plugins = {"score": {"enabled": [{"name": "RequestedToCapacityRatio", "weight": 2}]}}
    bad = profile_doc(
        plugins=plugins,
        pluginConfig=[
            {"name": "RequestedToCapacityRatio", "args": {"resources": [{"name": "cpu"}]}}
        ],
    )
    assert errors(bad) == [
        ("profiles[0].pluginConfig[0].args.shape", "at least one point must be specified"),
        (
            "profiles[0].pluginConfig[0].args.resources[0].weight",
            "resource cpu weight must not be less than 1",
        ),
    ]
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    good = profile_doc(
        plugins=plugins,
        pluginConfig=[{"name": "RequestedToCapacityRatio", "args": {"shape": shape}}],
    )
    config = load_configuration(good, target=KUBE_1_20)
    assert config.profiles[0].plugin_args["RequestedToCapacityRatio"] == {
        "shape": shape,
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
    }


def test_v1_args_fields_and_kinds_that_v1beta1_lacks_are_errors() -> None:
    document = profile_doc(
        pluginConfig=[
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
            {"name": "NodeResourcesBalancedAllocation", "args": {}},
        ]
    )
    assert errors(document) == [
        ("profiles[0].pluginConfig[0].args.scoringStrategy", 'unknown field "scoringStrategy"'),
        (
            "profiles[0].pluginConfig[1].args.kind",
            "decoding args for plugin NodeResourcesBalancedAllocation: no kind "
            f'"NodeResourcesBalancedAllocationArgs" is registered for version "{GROUP}/v1beta1"',
        ),
    ]


def test_v1beta1_only_plugins_are_not_in_later_registries() -> None:
    v1 = doc(
        "v1",
        profiles=[{"plugins": {"score": {"enabled": [{"name": "NodeResourcesLeastAllocated"}]}}}],
    )
    assert errors(v1, Target("kube-scheduler", "1.30")) == [
        (
            "profiles[0].plugins.score.enabled[0]",
            'ScorePlugin "NodeResourcesLeastAllocated" does not exist',
        )
    ]


def test_unmodelled_1_20_plugins_are_reported_as_skipped() -> None:
    from scoring.engine import Framework

    config = load_configuration(doc(), target=KUBE_1_20)
    skipped = {s.plugin: s for s in Framework(config.profiles[0]).skipped_plugins}
    assert skipped["NodePreferAvoidPods"].reason == (
        "the preferAvoidPods node annotation is not modelled"
    )
    assert skipped["NodePreferAvoidPods"].weight == 10000


def test_a_v1beta1_document_is_not_converted_to_later_versions() -> None:
    config = load_configuration(doc(), target=KUBE_1_20)
    with pytest.raises(InputError, match="v1beta1 names other plugins"):
        sparse_document(config, f"{GROUP}/v1beta2")


def test_extension_points_1_20_plugins_lack_are_errors_for_1_20_only() -> None:
    """NodeAffinity has no PreScore at v1.20.2 (``nodeaffinity/node_affinity.go``)."""
    document = profile_doc(plugins={"preScore": {"enabled": [{"name": "NodeAffinity"}]}})
    assert errors(document) == [
        (
            "profiles[0].plugins.preScore.enabled[3]",
            'plugin "NodeAffinity" does not extend PreScorePlugin plugin',
        )
    ]
    assert errors(document, Target("kube-scheduler", "1.22")) == []
