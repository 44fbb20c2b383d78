"""v1 defaulting: the 1.35 default profile, multiPoint merging and expansion, default args."""

from __future__ import annotations

from typing import Any

from scoring.config import (
    EXTENSION_POINTS,
    Profile,
    SchedulerConfiguration,
    default_configuration,
    load_configuration,
)
from scoring.config.defaults import merge_plugin_set

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def load(**fields: Any) -> SchedulerConfiguration:
    return load_configuration({**HEADER, **fields})


def one_profile(plugins: dict[str, Any] | None = None, **fields: Any) -> Profile:
    profile: dict[str, Any] = dict(fields)
    if plugins is not None:
        profile["plugins"] = plugins
    return load(profiles=[profile]).profiles[0]


def names(profile: Profile, point: str) -> list[str]:
    return list(profile.plugin_names(point))


def weights(profile: Profile) -> list[tuple[str, int]]:
    return [(ref.name, ref.weight) for ref in profile.plugins["score"]]


# kube-scheduler 1.35's default profile after multiPoint expansion
# (pkg/scheduler/apis/config/testing/defaults ExpandedPluginsV1, default feature gates).
EXPANDED_DEFAULTS = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ],
    "filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "permit": [],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
DEFAULT_SCORE_WEIGHTS = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]
DEFAULT_MULTI_POINT = [
    {"name": "SchedulingGates"},
    {"name": "PrioritySort"},
    {"name": "NodeUnschedulable"},
    {"name": "NodeName"},
    {"name": "TaintToleration", "weight": 3},
    {"name": "NodeAffinity", "weight": 2},
    {"name": "NodePorts"},
    {"name": "NodeResourcesFit", "weight": 1},
    {"name": "VolumeRestrictions"},
    {"name": "NodeVolumeLimits"},
    {"name": "VolumeBinding"},
    {"name": "VolumeZone"},
    {"name": "PodTopologySpread", "weight": 2},
    {"name": "InterPodAffinity", "weight": 2},
    {"name": "DynamicResources", "weight": 2},
    {"name": "DefaultPreemption"},
    {"name": "NodeResourcesBalancedAllocation", "weight": 1},
    {"name": "ImageLocality", "weight": 1},
    {"name": "DefaultBinder"},
]
DEFAULT_ARGS = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "DynamicResources": {"filterTimeout": "10s"},
    "InterPodAffinity": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    },
    "NodeResourcesFit": {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    },
    "PodTopologySpread": {"defaultingType": "System"},
    "VolumeBinding": {"bindTimeoutSeconds": 600},
}


def test_default_profile_plugins_per_extension_point() -> None:
    config = default_configuration()
    assert len(config.profiles) == 1
    profile = config.profiles[0]
    assert profile.scheduler_name == "default-scheduler"
    assert tuple(profile.plugins) == EXTENSION_POINTS
    assert {point: names(profile, point) for point in EXTENSION_POINTS} == EXPANDED_DEFAULTS
    assert weights(profile) == DEFAULT_SCORE_WEIGHTS
    for point in EXTENSION_POINTS:
        if point != "score":
            assert all(ref.weight == 0 for ref in profile.plugins[point])


def test_default_plugin_args() -> None:
    profile = default_configuration().profiles[0]
    assert {k: dict(v) for k, v in profile.plugin_args.items()} == DEFAULT_ARGS
    assert profile.percentage_of_nodes_to_score is None


def test_default_document() -> None:
    document = default_configuration().document
    assert document["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert document["kind"] == "KubeSchedulerConfiguration"
    assert document["parallelism"] == 16
    assert document["percentageOfNodesToScore"] == 0
    assert document["podInitialBackoffSeconds"] == 1
    assert document["podMaxBackoffSeconds"] == 10
    assert document["enableProfiling"] is True
    assert document["enableContentionProfiling"] is True
    assert document["leaderElection"] == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }
    assert document["clientConnection"] == {
        "kubeconfig": "",
        "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 50,
        "burst": 100,
    }
    profile = document["profiles"][0]
    assert profile["plugins"]["multiPoint"] == {"enabled": DEFAULT_MULTI_POINT}
    assert all(profile["plugins"][p] == {} for p in EXTENSION_POINTS)
    # Default args are appended in plugin-name order, with their apiVersion and kind.
    configs = profile["pluginConfig"]
    assert [c["name"] for c in configs] == sorted(DEFAULT_ARGS)
    fit = next(c for c in configs if c["name"] == "NodeResourcesFit")["args"]
    assert fit["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert fit["kind"] == "NodeResourcesFitArgs"


def test_explicit_scalars_kept_and_zero_values_defaulted() -> None:
    config = load(
        parallelism=4,
        percentageOfNodesToScore=50,
        leaderElection={"leaderElect": False, "leaseDuration": "0s", "renewDeadline": "1m"},
        clientConnection={"qps": 0, "burst": 7},
        enableProfiling=False,
    )
    document = config.document
    assert document["parallelism"] == 4
    assert config.percentage_of_nodes_to_score == 50
    assert document["leaderElection"]["leaderElect"] is False
    assert document["leaderElection"]["leaseDuration"] == "15s"
    assert document["leaderElection"]["renewDeadline"] == "1m0s"
    assert document["clientConnection"]["qps"] == 50
    assert document["clientConnection"]["burst"] == 7
    assert document["enableProfiling"] is False
    assert "enableContentionProfiling" not in document


def test_multi_point_enabled_default_is_replaced_in_place() -> None:
    profile = one_profile({"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 9}]}})
    expected = [(n, 9 if n == "NodeAffinity" else w) for n, w in DEFAULT_SCORE_WEIGHTS]
    assert weights(profile) == expected
    assert names(profile, "filter") == EXPANDED_DEFAULTS["filter"]


def test_multi_point_enabled_new_plugin_is_appended() -> None:
    config = load(
        profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}}]
    )
    multi_point = config.document["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    assert multi_point[-1] == {"name": "NodeResourceTopologyMatch"}
    profile = config.profiles[0]
    assert names(profile, "filter")[-1] == "NodeResourceTopologyMatch"
    assert weights(profile)[-1] == ("NodeResourceTopologyMatch", 1)  # unset weight is 1
    assert names(profile, "postBind") == ["NodeResourceTopologyMatch"]


def test_multi_point_disabled_removes_default_everywhere() -> None:
    profile = one_profile({"multiPoint": {"disabled": [{"name": "NodeAffinity"}]}})
    for point in EXTENSION_POINTS:
        assert "NodeAffinity" not in names(profile, point)
    # and its default args are not added
    assert "NodeAffinity" not in profile.plugin_args


def test_multi_point_star_disables_defaults_but_enabled_still_registers() -> None:
    profile = one_profile(
        {
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [
                    {"name": "PrioritySort"},
                    {"name": "NodeResourcesFit", "weight": 4},
                    {"name": "DefaultBinder"},
                ],
            }
        }
    )
    assert names(profile, "queueSort") == ["PrioritySort"]
    assert names(profile, "preFilter") == ["NodeResourcesFit"]
    assert names(profile, "filter") == ["NodeResourcesFit"]
    assert weights(profile) == [("NodeResourcesFit", 4)]
    assert names(profile, "bind") == ["DefaultBinder"]
    assert names(profile, "postFilter") == []
    assert sorted(profile.plugin_args) == ["NodeResourcesFit"]


def test_star_at_specific_point_skips_multi_point_expansion() -> None:
    profile = one_profile(
        {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality"}]}}
    )
    assert weights(profile) == [("ImageLocality", 1)]
    # other extension points are untouched, the scorers still filter
    assert names(profile, "filter") == EXPANDED_DEFAULTS["filter"]
    assert names(profile, "preScore") == EXPANDED_DEFAULTS["preScore"]


def test_specific_point_disable_removes_plugin_from_that_point_only() -> None:
    profile = one_profile({"filter": {"disabled": [{"name": "NodePorts"}]}})
    assert "NodePorts" not in names(profile, "filter")
    assert "NodePorts" in names(profile, "preFilter")


def test_specific_point_enable_overrides_multi_point_and_comes_first() -> None:
    # A plugin listed at the point itself is an override: its settings win (weight 5) and the
    # framework runs overrides before the multiPoint plugins.
    profile = one_profile({"score": {"enabled": [{"name": "ImageLocality", "weight": 5}]}})
    assert weights(profile)[0] == ("ImageLocality", 5)
    assert [n for n, _ in weights(profile)[1:]] == EXPANDED_DEFAULTS["score"][:-1]


def test_reorder_by_disabling_and_re_enabling() -> None:
    profile = one_profile(
        {
            "filter": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "NodeName"}, {"name": "NodeUnschedulable"}],
            }
        }
    )
    assert names(profile, "filter") == ["NodeName", "NodeUnschedulable"]


def test_score_weight_from_score_point_beats_multi_point() -> None:
    profile = one_profile(
        {
            "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 7}]},
            "score": {"enabled": [{"name": "ImageLocality", "weight": 3}]},
        }
    )
    assert dict(weights(profile))["ImageLocality"] == 3


def test_zero_weight_means_one_and_negative_weights_are_kept() -> None:
    profile = one_profile(
        {
            "multiPoint": {
                "enabled": [
                    {"name": "ImageLocality", "weight": 0},
                    {"name": "NodeAffinity", "weight": -2},
                ]
            }
        }
    )
    table = dict(weights(profile))
    assert table["ImageLocality"] == 1
    assert table["NodeAffinity"] == -2  # upstream does not reject negative weights


def test_merge_plugin_set_keeps_disabled_for_expansion() -> None:
    merged = merge_plugin_set(
        {"enabled": [{"name": "A"}, {"name": "B", "weight": 2}]},
        {
            "enabled": [{"name": "C"}, {"name": "B", "weight": 5}],
            "disabled": [{"name": "A", "weight": 3}],
        },
    )
    assert merged == {
        "enabled": [{"name": "B", "weight": 5}, {"name": "C"}],
        "disabled": [{"name": "A"}],
    }


def test_merge_plugin_set_keeps_duplicates_for_the_framework_to_reject() -> None:
    merged = merge_plugin_set(
        {"enabled": [{"name": "A"}]}, {"enabled": [{"name": "A", "weight": 1}, {"name": "A"}]}
    )
    assert merged == {"enabled": [{"name": "A"}, {"name": "A", "weight": 1}]}


def test_existing_args_are_defaulted_and_missing_ones_added() -> None:
    profile = one_profile(
        pluginConfig=[
            {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": 5}},
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
            {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu"}]}},
            {"name": "InterPodAffinity"},  # no args: decoded as empty, then defaulted
        ]
    )
    args = profile.plugin_args
    assert args["DefaultPreemption"] == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 5,
    }
    assert args["NodeResourcesFit"] == {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    }
    assert args["NodeResourcesBalancedAllocation"] == {"resources": [{"name": "cpu", "weight": 1}]}
    assert args["InterPodAffinity"] == DEFAULT_ARGS["InterPodAffinity"]
    assert args["VolumeBinding"] == DEFAULT_ARGS["VolumeBinding"]  # added
    assert sorted(args) == sorted(DEFAULT_ARGS)


def test_args_type_meta_is_accepted_and_stripped() -> None:
    profile = one_profile(
        pluginConfig=[
            {
                "name": "InterPodAffinity",
                "args": {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "InterPodAffinityArgs",
                    "hardPodAffinityWeight": 7,
                },
            }
        ]
    )
    assert profile.plugin_args["InterPodAffinity"] == {
        "hardPodAffinityWeight": 7,
        "ignorePreferredTermsOfExistingPods": False,
    }


def test_unknown_plugin_args_are_kept_raw() -> None:
    config = load(
        profiles=[
            {
                "plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality"}]}},
                "pluginConfig": [{"name": "ImageLocality", "args": {"anything": [1, 2]}}],
            }
        ]
    )
    assert config.profiles[0].plugin_args["ImageLocality"] == {"anything": [1, 2]}


def test_durations_are_rendered_as_go_prints_them() -> None:
    config = load(
        leaderElection={"leaseDuration": "90s", "renewDeadline": "1m", "retryPeriod": "1500ms"}
    )
    election = config.document["leaderElection"]
    assert (election["leaseDuration"], election["renewDeadline"], election["retryPeriod"]) == (
        "1m30s",
        "1m0s",
        "1.5s",
    )
