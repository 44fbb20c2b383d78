"""Pod label selectors and the per-node matching-pod counts kept in step with placements."""

from __future__ import annotations

import random

import pytest

from scoring import podselectors
from scoring.objects import parse_pod
from scoring.podselectors import CountKey, label_selector, matching_pods, pod_counts
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_node, make_pod

SELECTORS = [
    {"matchLabels": {"app": "web"}},
    {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {},
]


def random_pod(rng: random.Random, name: str, node: str | None = None) -> dict[str, object]:
    labels = {k: rng.choice(vals) for k, vals in (("app", ["web", "api"]), ("tier", ["db", "fe"]))}
    labels = {k: v for k, v in labels.items() if rng.random() < 0.7}
    pod = make_pod(name, namespace=rng.choice(["a", "b"]), node_name=node, labels=labels)
    if rng.random() < 0.1:
        pod["metadata"]["deletionTimestamp"] = "2026-11-20T10:00:00Z"
    return pod


def brute(snapshot: Snapshot, key: CountKey) -> list[int]:
    """Counted pod by pod, independently of the index under test."""
    return [
        sum(
            1
            for pod in pods
            if not (key.skip_terminating and pod.terminating)
            and (key.scope is None or pod.namespace in key.scope)
            and key.selector.matches(pod.labels)
        )
        for pods in snapshot.pods_on_node
    ]


@pytest.mark.parametrize("seed", range(5))
def test_counts_follow_placements_removals_and_evictions(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(podselectors, "MAX_CACHED_SELECTORS", 3)  # force evictions
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", {"cpu": 8000, "pods": 110}) for i in range(4)]
    bound = [random_pod(rng, f"p{i}", f"n{rng.randrange(4)}") for i in range(30)]
    snapshot = Snapshot.from_objects([*nodes, *bound], warn=lambda _: None)
    keys = [
        CountKey(scope, label_selector(raw, "s"), skip)
        for raw in SELECTORS
        for scope in (frozenset({"a"}), None)
        for skip in (True, False)
    ]
    for step in range(60):
        key = rng.choice(keys)
        expected = brute(snapshot, key)
        assert pod_counts(snapshot, key).tolist() == expected, step
        named = matching_pods(snapshot, key, range(len(snapshot)))
        assert len(named) == sum(expected)
        if rng.random() < 0.5:
            snapshot.assume_pod(parse_pod(random_pod(rng, f"new-{step}")), rng.randrange(4))
        else:
            node = rng.randrange(4)
            if snapshot.pods_on_node[node]:
                snapshot.forget_pod(rng.choice(snapshot.pods_on_node[node]), node)


def test_null_selects_nothing_and_empty_selects_everything() -> None:
    assert label_selector(None, "s").matches({"a": "b"}) is False
    assert label_selector({}, "s").matches({}) is True
    assert label_selector({}, "s").empty and not label_selector(None, "s").empty
