"""Merging the collect policy into ``colocation-config`` keeps what schedboard does not own."""

from __future__ import annotations

import json

import pytest

from policy.clusters.gateway.apply import merge_colocation
from policy.clusters.gateway.desired import collect_policy
from policy.clusters.gateway.errors import PermanentError

FOREIGN = {
    "enable": True,
    "cpuReclaimThresholdPercent": 60,
    "metricAggregatePolicy": {"durations": ["5m", "10m"]},
    "nodeConfigs": [
        {
            "name": "gpu-pool",
            "nodeSelector": {"matchLabels": {"pool": "gpu"}},
            "cpuReclaimThresholdPercent": 50,
        }
    ],
}
# nodeConfigs entries as the collect policies render them (policy.policies.rendering).
OURS = {
    "name": "sb-general",
    "nodeSelector": {"matchLabels": {"pool": "general"}},
    "metricReportIntervalSeconds": 15,
}
THEIRS = {
    "name": "gpu-pool",
    "nodeSelector": {"matchLabels": {"pool": "gpu"}},
    "metricReportIntervalSeconds": 5,
}


def merged(text: str | None, *args: object) -> dict:
    after, _, _ = merge_colocation(text, *args)  # type: ignore[arg-type]
    assert after is not None
    return json.loads(after)


def test_sets_only_the_managed_fields() -> None:
    config = merged(json.dumps(FOREIGN), collect_policy(30, 600), [], frozenset())
    assert config == {
        **FOREIGN,
        "metricReportIntervalSeconds": 30,
        "metricAggregateDurationSeconds": 600,
    }
    assert list(config)[:4] == list(FOREIGN)  # existing keys stay in place


def test_appends_owned_node_configs_after_foreign_ones() -> None:
    after, notes, owned = merge_colocation(json.dumps(FOREIGN), {}, [OURS], frozenset())
    assert after is not None and notes == []
    assert json.loads(after)["nodeConfigs"] == [FOREIGN["nodeConfigs"][0], OURS]
    assert owned == {"sb-general"}


def test_unchanged_config_gives_no_new_text() -> None:
    first, _, owned = merge_colocation(json.dumps(FOREIGN), collect_policy(30), [OURS], frozenset())
    again, notes, owned_again = merge_colocation(first, collect_policy(30), [OURS], owned)
    assert again is None and notes == [] and owned_again == owned


def test_never_takes_over_a_foreign_node_config() -> None:
    after, notes, owned = merge_colocation(json.dumps(FOREIGN), {}, [THEIRS], frozenset())
    assert after is None
    assert owned == frozenset()
    assert notes == ["nodeConfigs entry 'gpu-pool' was written by someone else; left alone"]


def test_removes_an_owned_node_config_no_longer_wanted() -> None:
    first, _, owned = merge_colocation(json.dumps(FOREIGN), {}, [OURS], frozenset())
    after, _, owned_after = merge_colocation(first, {}, [], owned)
    assert after is not None
    assert json.loads(after) == FOREIGN
    assert owned_after == frozenset()


def test_keeps_fields_others_added_to_an_owned_entry() -> None:
    first, _, owned = merge_colocation(None, {}, [OURS], frozenset())
    assert first is not None
    edited = json.loads(first)
    edited["nodeConfigs"][0]["cpuReclaimThresholdPercent"] = 70
    changed = {**OURS, "metricReportIntervalSeconds": 20}
    config = merged(json.dumps(edited), {}, [changed], owned)
    assert config["nodeConfigs"] == [{**changed, "cpuReclaimThresholdPercent": 70}]
    # Dropping the entry later keeps what the other writer put there.
    config = merged(json.dumps(config), {}, [], owned)
    assert config["nodeConfigs"] == [{"name": "sb-general", "cpuReclaimThresholdPercent": 70}]


def test_none_removes_a_cluster_field() -> None:
    config = merged(
        json.dumps({**FOREIGN, "metricReportIntervalSeconds": 30}),
        collect_policy(),
        [],
        frozenset(),
    )
    assert config == FOREIGN


def test_warns_when_colocation_is_not_enabled() -> None:
    _, notes, _ = merge_colocation(
        '{"cpuReclaimThresholdPercent": 60}', collect_policy(30), [], frozenset()
    )
    assert len(notes) == 1 and '"enable": true' in notes[0]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"nodeConfigs": {"a": 1}}'])
def test_refuses_to_overwrite_what_it_cannot_read(text: str) -> None:
    with pytest.raises(PermanentError, match="will not overwrite"):
        merge_colocation(text, collect_policy(30), [], frozenset())


def test_rejects_fields_it_does_not_manage() -> None:
    with pytest.raises(ValueError, match="enable"):
        merge_colocation("{}", {"enable": 1}, [], frozenset())
