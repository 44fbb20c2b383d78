"""koord-descheduler's configuration, one LowNodeLoad round, and the coherence of the stack."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scoring.config.loader import load_configuration
from scoring.descheduler import coherence, config, lownodeload, replacement, slo_thresholds
from scoring.descheduler.args import (
    DEFAULT_POOL,
    AnomalyCondition,
    LowNodeLoadArgs,
    NodePool,
    load_args,
    validate_args,
)
from scoring.descheduler.detector import ANOMALY, OK, Detector
from scoring.engine import Engine
from scoring.errors import ConfigurationInvalid
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod

FIXTURES = Path(__file__).parent / "fixtures" / "descheduler"
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
NOW_NS = int(NOW.timestamp()) * 10**9
GI = 2**30


def chart(enabled: bool = True) -> config.DeschedulerConfiguration:
    name = "koord-descheduler-config-v1.7.0" + ("-lownodeload" if enabled else "") + ".yaml"
    return config.load(config.parse_document((FIXTURES / name).read_text()))


def node_metric(
    name: str,
    system: dict[str, str],
    pods: list[tuple[str, dict[str, str]]],
    *,
    age: timedelta = timedelta(seconds=30),
    node_usage: dict[str, str] | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": name},
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 60}},
        "status": {
            "updateTime": (NOW - age).isoformat().replace("+00:00", "Z"),
            "nodeMetric": {
                "nodeUsage": {"resources": node_usage or system},
                "systemUsage": {"resources": system},
            },
            "podsMetric": [
                {"namespace": namespace, "name": pod, "podUsage": {"resources": usage}}
                for pod, usage in pods
            ],
        },
    }


def owned_pod(
    name: str, node: str, *, cpu: str = "100m", memory: str = "1Gi", **kw: Any
) -> dict[str, Any]:
    pod = make_pod(
        name,
        node_name=node,
        scheduler_name="koord-scheduler",
        containers=[make_container("c", {"cpu": cpu, "memory": memory})],
        **kw,
    )
    pod["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "controller": True}]
    pod["metadata"]["creationTimestamp"] = "2026-11-27T10:00:00Z"
    return pod


def cluster() -> list[dict[str, Any]]:
    """hot: memory 90 % (over 80); cold: 20 % (under 55); warm: 65 % (between); stale: expired."""
    alloc = {"cpu": "16", "memory": "100Gi", "pods": "110"}
    objects: list[dict[str, Any]] = [make_node(n, alloc) for n in ("hot", "cold", "warm", "stale")]
    objects += [
        owned_pod("batch", "hot", labels={"koordinator.sh/priority-class": "koord-batch"}),
        owned_pod("prod", "hot", labels={"koordinator.sh/priority-class": "koord-prod"}),
        owned_pod("big", "hot", labels={"koordinator.sh/priority-class": "koord-batch"}),
        owned_pod("c1", "cold"),
    ]
    objects += [
        node_metric(
            "hot",
            {"cpu": "1", "memory": "10Gi"},
            [
                ("batch", {"cpu": "1", "memory": "20Gi"}),
                ("prod", {"cpu": "1", "memory": "30Gi"}),
                ("big", {"cpu": "1", "memory": "30Gi"}),
            ],
        ),
        node_metric(
            "cold", {"cpu": "1", "memory": "10Gi"}, [("c1", {"cpu": "1", "memory": "10Gi"})]
        ),
        node_metric("warm", {"cpu": "2", "memory": "65Gi"}, []),
        node_metric("stale", {"cpu": "15", "memory": "99Gi"}, [], age=timedelta(seconds=180)),
    ]
    return objects


def snapshot() -> Snapshot:
    return Snapshot.from_objects(cluster())


# -- configuration ------------------------------------------------------------------------------


def test_chart_as_shipped_keeps_lownodeload_off_and_its_args_as_written() -> None:
    cfg = chart(enabled=False)
    assert not cfg.lownodeload_enabled and cfg.lownodeload is None
    assert cfg.interval_ns == 10 * 10**9
    assert cfg.profiles[0].enabled["evict"] == ("MigrationController",)
    args = config.lownodeload_args_of(cfg.raw)
    assert args is not None and args["highThresholds"] == {"cpu": 75, "memory": 80}
    assert cfg.migration.namespaces_exclude == ("kube-system", "koordinator-system")


def test_chart_with_lownodeload_defaults_into_the_default_pool() -> None:
    cfg = chart()
    assert cfg.lownodeload_profile == "koord-descheduler"
    assert cfg.lownodeload_args_path == "profiles[0].pluginConfig[1].args"
    args = cfg.lownodeload
    assert args is not None and args.node_fit and args.node_metric_expiration_seconds == 180
    (pool,) = args.node_pools
    assert pool.name == DEFAULT_POOL and pool.node_selector is None
    assert pool.low == {"cpu": 45.0, "memory": 55.0} and pool.high == {"cpu": 75.0, "memory": 80.0}
    assert pool.resource_weights == {"cpu": 1, "memory": 1}
    assert pool.anomaly == AnomalyCondition(60 * 10**9, 5, 3)


def test_pools_inherit_nil_maps_and_zero_counts_but_not_the_deviation_flag() -> None:
    args = load_args(
        {
            "useDeviationThresholds": True,
            "lowThresholds": {"cpu": 10},
            "highThresholds": {"cpu": 20},
            "anomalyCondition": {"consecutiveAbnormalities": 2, "consecutiveNormalities": 4},
            "nodePools": [
                {
                    "name": "gpu",
                    "nodeSelector": {"matchLabels": {"gpu": "true"}},
                    "highThresholds": {"cpu": 30},
                    "anomalyCondition": {"consecutiveNormalities": 7},
                }
            ],
        }
    )
    default, gpu = args.node_pools
    assert default.use_deviation_thresholds and not gpu.use_deviation_thresholds
    assert gpu.low == {"cpu": 10.0} and gpu.high == {"cpu": 30.0}
    assert (gpu.anomaly.consecutive_abnormalities, gpu.anomaly.consecutive_normalities) == (2, 7)


@pytest.mark.parametrize(
    ("raw", "field", "detail"),
    [
        (
            {"lowThresholds": {"cpu": 80}, "highThresholds": {"cpu": 70}},
            "nodePools[0].lowThresholds[cpu]",
            "low percentage must be less than or equal to highThresholds",
        ),
        ({"numberOfNodes": -1}, "numberOfNodes", "must be greater than or equal to 0"),
        (
            {"nodeMetricExpirationSeconds": 0},
            "nodeMetricExpiredSeconds",
            "nodeMetricExpiredSeconds should be a positive value",
        ),
        (
            {"evictableNamespaces": {"include": ["a"], "exclude": ["b"]}},
            "evictableNamespaces",
            "only one of Include/Exclude namespaces can be set",
        ),
        # SetDefaults' else-if: both counts 0 gives {5, 0}, which validation refuses.
        (
            {"anomalyCondition": {"consecutiveAbnormalities": 0, "consecutiveNormalities": 0}},
            "nodePools[0].anomalyDetectionThresholds.consecutiveNormalities",
            "consecutiveNormalities must be greater than 0",
        ),
        (
            {"prodHighThresholds": {"cpu": 90}, "highThresholds": {"cpu": 80}},
            "nodePools[0].ProdHighThresholds[cpu]",
            "node percentage must be greater than or equal to prodHighThresholds",
        ),
        ({"highThreshold": {"cpu": 1}}, "highThreshold", 'unknown field "highThreshold"'),
        ({"highThresholds": {"cpu": float("inf")}}, "highThresholds[cpu]", "expected a number"),
        ({"numberOfNodes": 2**31}, "numberOfNodes", "expected an int32"),
    ],
)
def test_validation_names_the_field_and_the_rule(
    raw: dict[str, Any], field: str, detail: str
) -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        load_args(raw)
    assert [(e.field, e.detail) for e in caught.value.errors] == [(field, detail)]


def test_duplicate_profile_names_are_refused_and_unknown_plugins_kept() -> None:
    doc: dict[str, Any] = {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerConfiguration",
        "profiles": [
            {
                "name": "a",
                "plugins": {"balance": {"enabled": [{"name": "Custom"}]}},
                "pluginConfig": [{"name": "Custom", "args": {"x": 1}}],
            },
            {"name": "a"},
        ],
    }
    with pytest.raises(ConfigurationInvalid) as caught:
        config.load(doc)
    assert [e.field for e in caught.value.errors] == ["profiles[1].name"]
    doc["profiles"].pop()
    assert config.load(doc).raw == doc


# -- one round ----------------------------------------------------------------------------------


def test_round_classifies_by_system_plus_pod_usage_and_skips_expired_metrics() -> None:
    cfg = chart()
    assert cfg.lownodeload is not None
    result = lownodeload.balance(snapshot(), cfg.lownodeload, cfg.migration, now_ns=NOW_NS)
    states = {name: load.state for name, load in result.nodes.items()}
    assert states == {"hot": "over", "cold": "under", "warm": "normal", "stale": "skipped"}
    hot = result.nodes["hot"]
    assert hot.measured["memory"] == 90 * GI and hot.high["memory"] == 80 * GI
    assert (
        hot.over_resources == ["memory"] and result.nodes["stale"].category == "NodeMetric expired"
    )
    assert result.over == ["hot"]


def test_node_usage_is_not_what_lownodeload_reads() -> None:
    objects = cluster()
    for obj in objects:
        if obj["kind"] == "NodeMetric" and obj["metadata"]["name"] == "warm":
            obj["status"]["nodeMetric"]["nodeUsage"] = {
                "resources": {"cpu": "16", "memory": "99Gi"}
            }
    args = chart().lownodeload
    assert args is not None
    result = lownodeload.balance(Snapshot.from_objects(objects), args, now_ns=NOW_NS)
    assert result.nodes["warm"].state == "normal"


def test_raw_allocatable_replaces_allocatable() -> None:
    objects = cluster()
    objects[2]["metadata"]["annotations"]["node.koordinator.sh/raw-allocatable"] = '{"cpu":"16"}'
    args = chart().lownodeload
    assert args is not None
    load = lownodeload.balance(Snapshot.from_objects(objects), args, now_ns=NOW_NS).nodes["warm"]
    assert load.allocatable == {"cpu": 16000} and load.high["memory"] == 0 and load.state == "over"


def test_nodefit_reserves_target_headroom_and_one_eviction_brings_the_node_below_high() -> None:
    cfg = chart()
    assert cfg.lownodeload is not None
    result = lownodeload.balance(snapshot(), cfg.lownodeload, cfg.migration, now_ns=NOW_NS)
    # Classification walks the pods in node order and keeps each fitting pod's usage on the
    # target: cold (20 Gi, high 80 Gi) takes batch (→ 40) and prod (→ 70), so big (30 Gi) fits
    # no target and is not removable. Batch pods sort before prod pods.
    candidates = result.pools[0].candidates["hot"]
    assert [(c.pod.name, c.removable) for c in candidates] == [
        ("batch", True),
        ("prod", True),
        ("big", False),
    ]
    assert candidates[2].reason == "fits no target node under its high thresholds"
    # 90 Gi − 20 Gi = 70 Gi is no longer above 80 Gi: the round stops after one pod.
    assert [e.pod.name for e in result.evictions] == ["batch"]
    assert result.evictions[0].usage["memory"] == 70 * GI


def test_anomaly_detector_needs_more_than_n_consecutive_rounds() -> None:
    detector = Detector(AnomalyCondition(60 * 10**9, 5, 3))
    states = [detector.mark(False, NOW_NS + i) for i in range(6)]
    assert states == [OK] * 5 + [ANOMALY]
    cfg = chart()
    assert cfg.lownodeload is not None
    detectors: dict[str, Detector] = {}
    second = 10**9
    for round_ in range(8):  # the chart's 10 s interval, within the 1 min anomaly timeout
        result = lownodeload.balance(
            snapshot(),
            cfg.lownodeload,
            cfg.migration,
            now_ns=NOW_NS + 10 * second * round_,
            assume_anomalous=False,
            detectors=detectors,
        )
        # From the 6th round on the node stays anomalous: the normal mark after an eviction
        # round (1) does not exceed consecutiveNormalities (3) before the next abnormal one.
        assert bool(result.evictions) == (round_ >= 5)
    # Past the timeout the anomaly ends and the count starts over.
    late = lownodeload.balance(
        snapshot(),
        cfg.lownodeload,
        cfg.migration,
        now_ns=NOW_NS + 10 * second * 7 + 61 * second,
        assume_anomalous=False,
        detectors=detectors,
    )
    assert late.evictions == [] and detectors["hot"].abnormal == 1


def test_evicted_pods_are_placed_away_from_their_source() -> None:
    cfg = chart()
    assert cfg.lownodeload is not None
    snap = snapshot()
    result = lownodeload.balance(snap, cfg.lownodeload, cfg.migration, now_ns=NOW_NS)
    scheduler = load_configuration(
        (
            Path(__file__).parent / "fixtures" / "scheduler-configs" / "koordinator-v1.7.0-v1.yaml"
        ).read_text()
    )
    (placed,) = replacement.place_evicted(Engine(scheduler), snap, result.evictions, NOW)
    # The Reservation's affinity keeps it off hot; LoadAware refuses stale (cpu 94 % > 65 %);
    # warm and cold remain.
    assert placed.error is None and placed.node in ("cold", "warm") and placed.feasible == 2
    assert placed.reasons == {
        "node(s) didn't match Pod's node affinity/selector": 1,
        "node(s) cpu usage exceed threshold": 1,
    }


# -- coherence ----------------------------------------------------------------------------------


def test_chart_stack_reports_admit_then_evict_and_the_be_memory_loop() -> None:
    koordlet = slo_thresholds.parse((FIXTURES / "slo-controller-config-v1.7.0.json").read_text())
    loadaware = coherence.LoadAwareSide({"cpu": 65, "memory": 95}, source="koord-scheduler-config")
    findings = coherence.check(snapshot(), loadaware, chart(), koordlet)
    by_rule = {f.rule: f for f in findings}
    r1 = by_rule["R1"].to_dict()
    assert r1["values"] == [
        {
            "component": coherence.LOADAWARE,
            "field": "usageThresholds[memory]",
            "value": 95,
            "source": "koord-scheduler-config",
        },
        {
            "component": coherence.LOWNODELOAD,
            "field": "profiles[0].pluginConfig[1].args.highThresholds[memory]",
            "value": 80.0,
            "source": "koord-descheduler-config",
        },
    ]
    assert r1["nodes"] == ["cold", "hot", "stale", "warm"]
    r3 = by_rule["R3"].to_dict()
    assert [v["value"] for v in r3["values"]] == [95, 70]
    assert r3["values"][1]["source"].endswith("(default)")
    assert by_rule["R2"].severity == "warning" and "cpu" in by_rule["R2"].summary
    assert by_rule["R4"].values[0].value == 70


def test_node_annotation_moves_loadaware_across_high() -> None:
    objects = cluster()
    objects[0]["metadata"]["annotations"]["scheduling.koordinator.sh/usage-thresholds"] = (
        '{"usageThresholds":{"cpu":70,"memory":75}}'
    )
    loadaware = coherence.LoadAwareSide({"cpu": 65, "memory": 95})
    findings = coherence.check(Snapshot.from_objects(objects), loadaware, chart(), None)
    r1 = next(f for f in findings if f.rule == "R1")
    assert "hot" not in r1.nodes
    annotated = [f for f in findings if any("node annotation" in v.source for v in f.values)]
    assert {f.rule for f in annotated} == {"R2"} and all(f.nodes == ["hot"] for f in annotated)


def test_lownodeload_off_reports_no_descheduler_rules() -> None:
    loadaware = coherence.LoadAwareSide({"cpu": 65, "memory": 95})
    findings = coherence.check(snapshot(), loadaware, chart(enabled=False), None)
    assert [f.rule for f in findings] == []


def test_low_key_without_high_is_a_zero_high_threshold() -> None:
    doc = config.parse_document(
        (FIXTURES / "koord-descheduler-config-v1.7.0-lownodeload.yaml").read_text()
    )
    doc["profiles"][0]["pluginConfig"][1]["args"]["lowThresholds"]["pods"] = 10
    cfg = config.load(doc)
    findings = coherence.check(snapshot(), None, cfg, None)
    assert [f.rule for f in findings] == ["R8"]
    assert cfg.lownodeload is not None
    result = lownodeload.balance(snapshot(), cfg.lownodeload, now_ns=NOW_NS)
    assert result.nodes["warm"].high["pods"] == 0


# Upstream vectors: validation_loadaware_test.go (TestValidateLowLoadUtilizationArgs_*), run on
# the internal args as ValidateLowLoadUtilizationArgs sees them (after defaulting).
@pytest.mark.parametrize(
    ("number", "bad"), [(10, False), (5, False), (0, False), (-1, True), (-5, True)]
)
def test_upstream_number_of_nodes(number: int, bad: bool) -> None:
    errors = validate_args(LowNodeLoadArgs(number_of_nodes=number))
    assert [e.detail for e in errors] == (["must be greater than or equal to 0"] if bad else [])


@pytest.mark.parametrize(
    ("include", "exclude", "bad"),
    [
        (["namespace1"], [], False),
        ([], ["namespace1"], False),
        (["namespace1", "namespace2"], [], False),
        (["namespace1"], ["namespace2"], True),
        (["namespace1", "namespace11"], ["namespace2"], True),
        (["namespace1"], ["namespace2", "namespace22"], True),
    ],
)
def test_upstream_evictable_namespaces(include: list[str], exclude: list[str], bad: bool) -> None:
    args = LowNodeLoadArgs(evictable_include=tuple(include), evictable_exclude=tuple(exclude))
    details = [e.detail for e in validate_args(args)]
    assert details == (["only one of Include/Exclude namespaces can be set"] if bad else [])


@pytest.mark.parametrize(
    ("high", "low", "anomaly", "bad"),
    [
        (100, 90, None, False),
        (0, 0, None, False),
        (0, -1, None, True),
        (100, -10, None, True),
        (-10, -100, None, True),
        (100, 50, (5, 3), False),
        (100, 50, (0, 3), True),
        (100, 50, (5, 0), True),
    ],
)
def test_upstream_node_pool_thresholds(
    high: int, low: int, anomaly: tuple[int, int] | None, bad: bool
) -> None:
    condition = AnomalyCondition() if anomaly is None else AnomalyCondition(0, *anomaly)
    pool = NodePool(
        "pool", None, False, {"cpu": float(low)}, {"cpu": float(high)}, None, None, {}, condition
    )
    assert bool(validate_args(LowNodeLoadArgs(node_pools=(pool,)))) == bad


def test_deviation_pools_compare_loadaware_with_average_plus_high() -> None:
    doc = config.parse_document(
        (FIXTURES / "koord-descheduler-config-v1.7.0-lownodeload.yaml").read_text()
    )
    args = doc["profiles"][0]["pluginConfig"][1]["args"]
    args.update(
        useDeviationThresholds=True, lowThresholds={"memory": 10}, highThresholds={"memory": 10}
    )
    cfg = config.load(doc)
    assert cfg.lownodeload is not None
    result = lownodeload.balance(snapshot(), cfg.lownodeload, cfg.migration, now_ns=NOW_NS)
    (pool,) = result.pools
    assert pool.average["memory"] == pytest.approx((90 + 20 + 65) / 3)
    # high = average + 10 % = 68.3 % of 100 Gi; hot (90) and nothing else is above it
    assert result.over == ["hot"]
    loadaware = coherence.LoadAwareSide({"cpu": 65, "memory": 95})
    without = coherence.check(snapshot(), loadaware, cfg, None)
    assert "R1" not in {f.rule for f in without}  # no averages: deviation pools are not compared
    findings = coherence.check(snapshot(), loadaware, cfg, None, averages={pool.name: pool.average})
    r1 = next(f for f in findings if f.rule == "R1")
    assert r1.values[1].value == pytest.approx(175 / 3 + 10)
    assert r1.values[1].field.startswith("average memory usage of pool __default_node_pool__")


def test_loadaware_refusing_every_node_and_a_threshold_of_100_are_r5() -> None:
    loadaware = coherence.LoadAwareSide({"cpu": 100, "memory": 95}, source="koord-scheduler-config")
    findings = coherence.check(snapshot(), loadaware, None, None, refused=4)
    error = next(f for f in findings if f.rule == "R5" and f.severity == "error")
    assert "all 4 nodes" in error.summary and "#2538" in error.summary
    warning = next(f for f in findings if f.rule == "R5" and f.severity == "warning")
    assert (warning.values[0].field, warning.values[0].value) == ("usageThresholds[cpu]", 100)
    assert sorted(warning.nodes) == ["cold", "hot", "stale", "warm"]
    some = coherence.check(snapshot(), loadaware, None, None, refused=3)
    assert not [f for f in some if f.rule == "R5" and f.severity == "error"]
    fine = coherence.LoadAwareSide({"cpu": 65, "memory": 95})
    assert coherence.check(snapshot(), fine, None, None, refused=0) == []


def test_the_scalar_defaults_shown_are_the_ones_decoding_applies() -> None:
    """Each default an editor shows beside an empty field, written into the args, decodes to
    what leaving the field out does."""
    from scoring.descheduler.args import SCALAR_DEFAULTS, decode_args
    from scoring.durations import parse_duration

    bare = decode_args({"lowThresholds": {"cpu": 10}, "highThresholds": {"cpu": 80}})
    anomaly = {k: v for k, v in SCALAR_DEFAULTS.items() if k.startswith("anomalyCondition.")}
    whole = decode_args(
        {
            "lowThresholds": {"cpu": 10},
            "highThresholds": {"cpu": 80},
            "anomalyCondition": {
                key.partition(".")[2]: int(text) if text.isdigit() else text
                for key, text in anomaly.items()
            },
        }
    )
    assert whole.node_pools == bare.node_pools  # the three apply together
    one = decode_args(
        {
            "lowThresholds": {"cpu": 10},
            "highThresholds": {"cpu": 80},
            "anomalyCondition": {"consecutiveAbnormalities": 5},
        }
    )
    assert one.node_pools[0].anomaly.timeout == 0  # written: an unset timeout is 0
    for field, text in SCALAR_DEFAULTS.items():
        if field in anomaly:
            continue
        value: Any = {"true": True, "false": False}.get(text, text)
        if text.isdigit():
            value = int(text)
        args: dict[str, Any] = {"lowThresholds": {"cpu": 10}, "highThresholds": {"cpu": 80}}
        head, _, leaf = field.rpartition(".")
        (args.setdefault(head, {}) if head else args)[leaf] = value
        written = decode_args(args)
        assert written.node_pools == bare.node_pools, field
        assert (written.paused, written.dry_run, written.node_fit) == (
            bare.paused,
            bare.dry_run,
            bare.node_fit,
        ), field
        assert (
            written.number_of_nodes,
            written.node_metric_expiration_seconds,
            written.detector_cache_timeout,
        ) == (
            bare.number_of_nodes,
            bare.node_metric_expiration_seconds,
            bare.detector_cache_timeout,
        ), field
    assert parse_duration(anomaly["anomalyCondition.timeout"]) == bare.node_pools[0].anomaly.timeout
