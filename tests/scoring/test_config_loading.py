"""Parsing and decoding (YAML/JSON, strictness, InputError), round-trips, the plugin catalog."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from scoring.config import (
    EXTENSION_POINTS,
    default_configuration,
    dump_configuration,
    known_plugins,
    load_configuration,
    validate_configuration,
)
from scoring.durations import format_duration, parse_duration
from scoring.errors import ConfigurationInvalid, InputError
from scoring.k8s_names import is_extended_resource_name, is_label_key

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
YAML_HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

EXAMPLE = (
    YAML_HEADER
    + """\
parallelism: 8
percentageOfNodesToScore: 40
leaderElection:
  leaderElect: false
clientConnection:
  qps: 20.5
extenders:
- urlPrefix: http://extender:8888/
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  httpTimeout: 30s
  managedResources:
  - name: example.com/foo
    ignoredByScheduler: true
profiles:
- schedulerName: default-scheduler
- schedulerName: packing
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesFit
        weight: 5
      disabled:
      - name: NodeResourcesBalancedAllocation
    score:
      disabled:
      - name: ImageLocality
    preFilter:
      disabled:
      - name: '*'
      enabled:
      - name: NodeResourcesFit
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - name: cpu
          weight: 2
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
"""
)


def test_yaml_and_json_text_and_mapping_give_the_same_configuration() -> None:
    from_yaml = load_configuration(EXAMPLE, source_name="example.yaml")
    mapping = yaml.safe_load(EXAMPLE)
    from_json = load_configuration(json.dumps(mapping))
    from_bytes = load_configuration(EXAMPLE.encode())
    from_mapping = load_configuration(mapping)
    assert from_yaml == from_json == from_bytes == from_mapping


def test_example_profiles() -> None:
    config = load_configuration(EXAMPLE)
    packing = config.profile("packing")
    assert packing is not None
    assert packing.plugin_names("preFilter") == ("NodeResourcesFit",)
    score = [(r.name, r.weight) for r in packing.plugins["score"]]
    assert score == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 5),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
    ]
    assert "NodeResourcesBalancedAllocation" not in packing.plugin_args
    assert packing.plugin_args["PodTopologySpread"]["defaultingType"] == "List"
    assert config.document["extenders"][0]["httpTimeout"] == "30s"
    assert config.document["clientConnection"]["qps"] == 20.5


@pytest.mark.parametrize(
    "source",
    [EXAMPLE, YAML_HEADER, YAML_HEADER + "profiles: [{schedulerName: a}, {schedulerName: b}]\n"],
    ids=["example", "minimal", "two-profiles"],
)
def test_round_trip_is_lossless(source: str) -> None:
    config = load_configuration(source)
    text = dump_configuration(config)
    again = load_configuration(text)
    assert again.document == config.document
    assert again.profiles == config.profiles
    assert dump_configuration(again) == text


def test_round_trip_keeps_out_of_tree_args() -> None:
    config = load_configuration(
        {
            **HEADER,
            "profiles": [
                {
                    "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
                    "pluginConfig": [
                        {
                            "name": "NodeResourceTopologyMatch",
                            "args": {"cacheResyncPeriodSeconds": 5},
                        }
                    ],
                }
            ],
        }
    )
    again = load_configuration(dump_configuration(config))
    assert again == config
    assert (
        again.profiles[0].plugin_args["NodeResourceTopologyMatch"]["cacheResyncPeriodSeconds"] == 5
    )


def test_dump_of_the_default_configuration_is_yaml_of_the_document() -> None:
    config = default_configuration()
    assert yaml.safe_load(dump_configuration(config)) == config.document
    assert json.loads(json.dumps(config.document)) == config.document


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "found nothing"),
        ("- a\n- b\n", "found list"),
        ("kind: KubeSchedulerConfiguration\n", "'apiVersion' is missing"),
        ("apiVersion: kubescheduler.config.k8s.io/v1\n", "'Kind' is missing"),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1alpha2\nkind: KubeSchedulerConfiguration\n",
            "removed in Kubernetes 1.21",
        ),
        ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n", 'no kind "Policy"'),
        ("a: [b\n", "not valid JSON or YAML"),
        (YAML_HEADER + "parallelism: 1\nparallelism: 2\n", 'duplicate field "parallelism"'),
        (YAML_HEADER + "---\n" + YAML_HEADER, "not valid JSON or YAML"),
    ],
)
def test_undecodable_input_is_an_input_error(text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        load_configuration(text, source_name="sched.yaml")
    assert not isinstance(info.value, ConfigurationInvalid)
    assert str(info.value).startswith("sched.yaml: ")
    assert message in str(info.value)


def test_duplicate_json_field_is_an_input_error() -> None:
    text = '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
    with pytest.raises(InputError, match='duplicate field "kind"'):
        load_configuration(text + ' "kind": "KubeSchedulerConfiguration"}')


def test_wrong_json_types_name_every_field() -> None:
    bad: dict[str, Any] = {
        **HEADER,
        "parallelism": "16",
        "leaderElection": {"leaderElect": "yes", "leaseDuration": "15 seconds"},
        "profiles": [
            {
                "percentageOfNodesToScore": 2.5,
                "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 2**40}]}},
                "pluginConfig": [
                    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": "1"}}
                ],
            },
            "not a profile",
        ],
    }
    with pytest.raises(InputError) as info:
        validate_configuration(bad, source_name="cfg")
    message = str(info.value)
    for field in (
        "parallelism",
        "leaderElection.leaderElect",
        "leaderElection.leaseDuration",
        "profiles[0].percentageOfNodesToScore",
        "profiles[0].plugins.score.enabled[0].weight",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
        "profiles[1]",
    ):
        assert f"{field}: " in message, field


def test_unknown_fields_are_field_errors_with_every_other_error() -> None:
    config, errors = validate_configuration(
        {**HEADER, "parallelism": 0, "profile": [], "profiles": [{"plugin": {}}]}
    )
    assert config is None
    assert [(e.field, e.type, e.detail) for e in errors] == [
        ("profile", "FieldValueInvalid", 'unknown field "profile"'),
        ("profiles[0].plugin", "FieldValueInvalid", 'unknown field "plugin"'),
        ("parallelism", "FieldValueInvalid", "should be an integer value greater than zero"),
    ]


def test_null_means_unset() -> None:
    config = load_configuration({**HEADER, "parallelism": None, "profiles": None})
    assert config.document["parallelism"] == 16
    assert config.profiles[0].scheduler_name == "default-scheduler"


def test_timestamps_stay_strings() -> None:
    _, errors = validate_configuration(YAML_HEADER + "profiles: [{schedulerName: 2024-01-02}]\n")
    assert errors == []


# --------------------------------------------------------------------------------------------
# Top-level validation rules (ValidateKubeSchedulerConfiguration)


def triples(**fields: Any) -> list[tuple[str, str, str]]:
    config, errors = validate_configuration({**HEADER, **fields})
    assert (config is None) == bool(errors)
    return [(e.field, e.type, e.detail) for e in errors]


def test_scalar_rules() -> None:
    assert triples(
        parallelism=-1,
        percentageOfNodesToScore=101,
        podInitialBackoffSeconds=-1,
        podMaxBackoffSeconds=-2,
        clientConnection={"burst": -1},
        profiles=[{"percentageOfNodesToScore": -1}],
    ) == [
        ("clientConnection.burst", "FieldValueInvalid", "must be non-negative"),
        ("parallelism", "FieldValueInvalid", "should be an integer value greater than zero"),
        ("profiles[0].percentageOfNodesToScore", "FieldValueInvalid", "not in valid range [0-100]"),
        ("percentageOfNodesToScore", "FieldValueInvalid", "not in valid range [0-100]"),
        ("podInitialBackoffSeconds", "FieldValueInvalid", "must be greater than 0"),
        (
            "podMaxBackoffSeconds",
            "FieldValueInvalid",
            "must be greater than or equal to PodInitialBackoffSeconds",
        ),
    ]


def test_leader_election_rules() -> None:
    assert triples(
        leaderElection={
            "leaseDuration": "-1s",
            "renewDeadline": "10s",
            "retryPeriod": "-2s",
            "resourceLock": "endpointsleases",
        }
    ) == [
        ("leaderElection.leaseDuration", "FieldValueInvalid", "must be greater than zero"),
        ("leaderElection.retryPeriod", "FieldValueInvalid", "must be greater than zero"),
        (
            "leaderElection.leaseDuration",
            "FieldValueInvalid",
            "must be greater than `RenewDeadline`",
        ),
        ("leaderElection.resourceLock", "FieldValueInvalid", 'resourceLock value must be "leases"'),
    ]
    # not checked when leader election is off
    assert triples(leaderElection={"leaderElect": False, "leaseDuration": "-1s"}) == []


def test_extender_rules() -> None:
    assert triples(
        extenders=[
            {"urlPrefix": "a", "prioritizeVerb": "p", "weight": 0, "bindVerb": "b"},
            {
                "urlPrefix": "b",
                "bindVerb": "b",
                "managedResources": [
                    {"name": "example.com/foo"},
                    {"name": "cpu"},
                    {"name": "example.com/foo"},
                    {"name": "bad/name/x"},
                ],
            },
        ]
    ) == [
        ("extenders[0].weight", "FieldValueInvalid", "must have a positive weight applied to it"),
        (
            "extenders[1].managedResources[1].name",
            "FieldValueInvalid",
            "is an invalid extended resource name",
        ),
        (
            "extenders[1].managedResources[2].name",
            "FieldValueInvalid",
            "duplicate extender managed resource name",
        ),
        (
            "extenders[1].managedResources[3].name",
            "FieldValueInvalid",
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
            "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
            "'example.com/MyName')",
        ),
        ("extenders", "FieldValueInvalid", "only one extender can implement bind"),
    ]


# --------------------------------------------------------------------------------------------
# Catalog


def test_known_plugins() -> None:
    catalog = {p.name: p for p in known_plugins()}
    defaults = [p.name for p in known_plugins() if p.in_default_profile]
    assert defaults[:2] == ["SchedulingGates", "PrioritySort"]
    assert defaults[-1] == "DefaultBinder"
    assert defaults.index("DynamicResources") == defaults.index("DefaultPreemption") - 1
    for plugin in known_plugins():
        assert set(plugin.extension_points) <= set(EXTENSION_POINTS)
        assert plugin.to_dict()["extensionPoints"] == list(plugin.extension_points)
    assert catalog["LoadAwareScheduling"].extension_points == (
        "preFilter",
        "filter",
        "score",
        "reserve",
    )
    assert catalog["LoadAwareScheduling"].args_kind == "LoadAwareSchedulingArgs"
    assert catalog["NodeResourceTopologyMatch"].extension_points == (
        "preFilter",
        "filter",
        "score",
        "reserve",
        "postBind",
    )
    assert catalog["LimitAware"].args_kind == "LimitAwareArgs"
    assert catalog["TaintToleration"].default_weight == 3
    assert catalog["NodeResourcesFit"].args_kind == "NodeResourcesFitArgs"


# --------------------------------------------------------------------------------------------
# Go helpers


@pytest.mark.parametrize(
    ("text", "nanoseconds", "printed"),
    [
        ("0", 0, "0s"),
        ("15s", 15 * 10**9, "15s"),
        ("1m", 60 * 10**9, "1m0s"),
        ("90s", 90 * 10**9, "1m30s"),
        ("1h2m3.5s", (3723 * 10**9) + 5 * 10**8, "1h2m3.5s"),
        ("1.5h", 5400 * 10**9, "1h30m0s"),
        ("100ms", 10**8, "100ms"),
        ("1500us", 1500 * 10**3, "1.5ms"),
        ("2\u00b5s", 2000, "2\u00b5s"),
        ("7ns", 7, "7ns"),
        ("-10s", -10 * 10**9, "-10s"),
        ("+.5s", 5 * 10**8, "500ms"),
    ],
)
def test_go_durations(text: str, nanoseconds: int, printed: str) -> None:
    assert parse_duration(text) == nanoseconds
    assert format_duration(nanoseconds) == printed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("10", 'time: missing unit in duration "10"'),
        ("10x", 'time: unknown unit "x" in duration "10x"'),
        (".s", 'time: invalid duration ".s"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
    ],
)
def test_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


def test_label_keys_and_extended_resources() -> None:
    assert is_label_key("topology.kubernetes.io/zone") == []
    assert is_label_key("Example.com/x") == [
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    assert is_label_key("/x") == ["prefix part must be non-empty"]
    assert is_label_key("x" * 64)[0] == "name part must be no more than 63 bytes"
    assert is_extended_resource_name("example.com/gpu")
    assert not is_extended_resource_name("cpu")
    assert not is_extended_resource_name("kubernetes.io/foo")
    assert not is_extended_resource_name("requests.example.com/gpu")
