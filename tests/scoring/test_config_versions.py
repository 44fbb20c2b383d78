"""v1beta2 and v1beta3 documents: decoded with their own fields, defaulted with their own
default plugins (per release), args in any config version the release reads, and rendered back
as written or converted."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scoring.config import (
    Target,
    check_configuration,
    load_configuration,
    render_document,
    sparse_document,
)
from scoring.config.dump import leaves
from scoring.errors import InputError

GROUP = "kubescheduler.config.k8s.io"


def doc(version: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "KubeSchedulerConfiguration", **fields}


def score_weights(version: str, target: Target | None = None) -> dict[str, int]:
    config = load_configuration(doc(version), target=target)
    return {ref.name: ref.weight for ref in config.profiles[0].plugins["score"]}


def test_v1beta2_default_score_weights() -> None:
    """v1beta2 ``getDefaultPlugins``: every score weight 1 except PodTopologySpread 2."""
    assert score_weights("v1beta2") == {
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
        "InterPodAffinity": 1,
        "NodeResourcesFit": 1,
        "NodeAffinity": 1,
        "PodTopologySpread": 2,
        "TaintToleration": 1,
    }


def test_v1beta3_default_score_weights_are_v1s_of_the_same_release() -> None:
    expected = {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert score_weights("v1beta3") == expected
    assert score_weights("v1", Target("kube-scheduler", "1.28")) == expected
    assert score_weights("v1")["DynamicResources"] == 2  # 1.35


def test_default_plugins_follow_the_release() -> None:
    filters_128 = load_configuration(doc("v1beta3")).profiles[0].plugin_names("filter")
    assert {"EBSLimits", "GCEPDLimits", "AzureDiskLimits"} <= set(filters_128)
    filters_135 = load_configuration(doc("v1")).profiles[0].plugin_names("filter")
    assert "EBSLimits" not in filters_135
    pre_enqueue = load_configuration(doc("v1"), target=Target("kube-scheduler", "1.26"))
    assert pre_enqueue.profiles[0].plugin_names("preEnqueue") == ()
    pre_enqueue = load_configuration(doc("v1beta2"))  # 1.27: PodSchedulingReadiness beta
    assert pre_enqueue.profiles[0].plugin_names("preEnqueue") == ("SchedulingGates",)


def test_v1beta2_has_no_multi_point() -> None:
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": "PrioritySort"}]}}}
    check = check_configuration(doc("v1beta2", profiles=[profile]))
    assert [(e.field, e.detail) for e in check.errors] == [
        ("profiles[0].plugins.multiPoint", 'unknown field "multiPoint"')
    ]


@pytest.mark.parametrize(("address", "valid"), [("0.0.0.0:0", True), ("0.0.0.0:10251", False)])
def test_v1beta2_deprecated_addresses(address: str, valid: bool) -> None:
    check = check_configuration(doc("v1beta2", healthzBindAddress=address))
    assert check.valid is valid
    if not valid:
        assert [(e.field, e.detail) for e in check.errors] == [
            ("healthzBindAddress", "must be empty or with an explicit 0 port")
        ]


def test_delay_cache_until_active_is_v1_only() -> None:
    check = check_configuration(doc("v1beta3", delayCacheUntilActive=True))
    assert [e.field for e in check.errors] == ["delayCacheUntilActive"]


def fit_args(version: str) -> dict[str, Any]:
    return {
        "name": "NodeResourcesFit",
        "args": {
            "apiVersion": f"{GROUP}/{version}",
            "kind": "NodeResourcesFitArgs",
            "scoringStrategy": {"type": "MostAllocated"},
        },
    }


@pytest.mark.parametrize(
    ("document_version", "args_version", "target", "valid"),
    [
        ("v1beta3", "v1beta3", None, True),
        ("v1beta3", "v1", None, True),
        ("v1", "v1beta3", Target("koord-scheduler", "1.7"), True),
        ("v1", "v1beta2", Target("kube-scheduler", "1.27"), True),
        ("v1", "v1beta3", None, False),  # 1.35 reads v1 only
        ("v1beta3", "v1beta2", None, False),  # 1.28 no longer reads v1beta2
    ],
)
def test_args_may_carry_any_version_the_release_reads(
    document_version: str, args_version: str, target: Target | None, valid: bool
) -> None:
    profile = {"schedulerName": "s", "pluginConfig": [fit_args(args_version)]}
    check = check_configuration(doc(document_version, profiles=[profile]), target=target)
    assert check.valid is valid, check.errors
    if valid:
        assert check.config is not None
        strategy = check.config.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]
        assert strategy["type"] == "MostAllocated"
    else:
        assert [e.field for e in check.errors] == ["profiles[0].pluginConfig[0].args.apiVersion"]


def test_removed_v1_plugin_names_depend_on_the_release() -> None:
    profile = {"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}
    check = check_configuration(doc("v1", profiles=[profile]))
    assert "was invalid in version" in check.errors[0].detail
    older = check_configuration(doc("v1", profiles=[profile]), target=Target("custom", "1.30"))
    assert older.valid


SPARSE = """\
apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
leaderElection:
  resourceName: koord-scheduler
profiles:
- schedulerName: koord-scheduler
  pluginConfig:
  - name: LoadAwareScheduling
    args:
      apiVersion: kubescheduler.config.k8s.io/v1beta3
      kind: LoadAwareSchedulingArgs
      usageThresholds: {cpu: 65}
"""


def test_render_is_the_document_as_written() -> None:
    config = load_configuration(SPARSE)
    assert config.api_version == f"{GROUP}/v1beta3"
    rendered = yaml.safe_load(render_document(config))
    assert leaves(rendered) == leaves(yaml.safe_load(SPARSE))
    assert "clientConnection" not in rendered
    assert config.document["leaderElection"]["resourceName"] == "koord-scheduler"


def test_render_converted_to_v1_changes_only_the_version() -> None:
    config = load_configuration(SPARSE)
    converted = sparse_document(config, f"{GROUP}/v1")
    assert converted["apiVersion"] == f"{GROUP}/v1"
    assert converted["profiles"][0]["pluginConfig"][0]["args"]["apiVersion"] == f"{GROUP}/v1"
    original = leaves(yaml.safe_load(SPARSE))
    changed = {k for k, v in leaves(converted).items() if original.get(k) != v}
    assert changed == {"apiVersion", "profiles[0].pluginConfig[0].args.apiVersion"}
    again = load_configuration(converted, target=config.target)
    assert again.profiles == config.profiles


def test_render_refuses_what_the_other_version_cannot_hold() -> None:
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}}}
    config = load_configuration(doc("v1", profiles=[profile]))
    with pytest.raises(InputError, match=r"profiles\[0\].plugins.multiPoint: not a field of"):
        sparse_document(config, f"{GROUP}/v1beta2")
    with pytest.raises(InputError, match="cannot render as"):
        sparse_document(config, "kubescheduler.config.k8s.io/v1alpha1")
