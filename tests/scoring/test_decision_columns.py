"""A decision packed from its arrays (``decision_codec.pack_decision``) is byte for byte the
decision packed from its JSON (``pack(decision.to_dict())``): on synthetic clusters with every
plugin, and on every conformance vector run through its own test's assertions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.engine import EXTENDED_PROFILE
from scoring import decision_codec
from scoring.config import load_configuration
from scoring.decision import Decision
from scoring.engine import Engine
from scoring.loading import load_objects, load_single
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster
from scoring.timeutil import parse_time
from tests.scoring import (
    builders,
    podaffinity_vectors,
    test_conformance_imagelocality,
    test_conformance_interpodaffinity,
    test_conformance_noderesources,
    test_conformance_podtopologyspread,
    test_limitaware_conformance,
    test_loadaware_conformance,
    test_nrt_conformance,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def assert_packs_alike(decision: Decision) -> None:
    """The oracle: the same payload and flags as packing the decision's JSON."""
    expected = decision_codec.pack(decision.to_dict())
    packed = decision_codec.pack_decision(decision)
    assert packed.flags == expected.flags
    assert packed.payload == expected.payload


@pytest.mark.parametrize("seed", [1, 7])
@pytest.mark.parametrize("profile", [None, EXTENDED_PROFILE], ids=["default", "extended"])
def test_synthetic_decisions_pack_alike(seed: int, profile: Mapping[str, Any] | None) -> None:
    objects = generate_cluster(nodes=40, nrt_nodes=4, pending_pods=12, seed=seed, now=NOW)
    snapshot = Snapshot.from_objects(objects)
    engine = Engine(load_configuration(profile)) if profile is not None else Engine()
    pending = [p for p in snapshot.pending if p.scheduler_name == "default-scheduler"]
    decisions = [engine.evaluate(parse_pod(p.raw), snapshot, NOW) for p in pending]
    # Feasible and filtered nodes, pods nothing fits, plugins' details.
    assert any(d.selected_index is None for d in decisions)
    assert any(len(d.feasible) > 1 for d in decisions)
    for decision in decisions:
        assert_packs_alike(decision)


def test_loadaware_nodes_with_pods_still_estimated_pack_alike() -> None:
    """Nodes whose NodeMetric does not report some of their pods yet (those pods are estimated)
    are computed with the usual nodes, their estimated pods listed node by node."""
    objects = generate_cluster(nodes=40, pending_pods=12, seed=5, now=NOW)
    metrics = [o for o in objects if o["kind"] == "NodeMetric"]
    for metric in metrics[::3]:
        metric["status"]["podsMetric"] = metric["status"]["podsMetric"][1:]
    snapshot = Snapshot.from_objects(objects)
    engine = Engine(load_configuration(EXTENDED_PROFILE))
    pending = [p for p in snapshot.pending if p.scheduler_name == "default-scheduler"]
    decisions = [engine.evaluate(parse_pod(p.raw), snapshot, NOW) for p in pending]
    listed = [
        node["details"]["LoadAwareScheduling"]["estimatedPods"]["count"]
        for node in decisions[0].to_dict()["nodes"]
    ]
    assert sum(count > 0 for count in listed) >= len(metrics[::3]) // 2
    for decision in decisions:
        assert_packs_alike(decision)


def test_a_decision_with_an_error_and_one_node_packs_alike() -> None:
    objects = generate_cluster(nodes=1, pending_pods=3, seed=3, now=NOW)
    snapshot = Snapshot.from_objects(objects)
    engine = Engine(load_configuration(EXTENDED_PROFILE))
    for pod in [p for p in snapshot.pending if p.scheduler_name == "default-scheduler"]:
        decision = engine.evaluate(parse_pod(pod.raw), snapshot, NOW)
        assert_packs_alike(decision)
        decision.error = "PreFilter: something failed"
        assert_packs_alike(decision)


def _in_process(
    tmp_path: Path,
    cluster: Sequence[Mapping[str, Any]],
    pod: Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    now: str | None = None,
) -> dict[str, Any]:
    """``builders.evaluate`` without the CLI's process, checking the oracle on the way."""
    objects = builders.write_json(tmp_path / "cluster.json", builders.object_list(cluster))
    pod_file = builders.write_json(tmp_path / "pod.json", pod)
    engine = Engine(load_configuration(config)) if config is not None else Engine()
    snapshot = Snapshot.from_objects(load_objects([str(objects)]))
    decision = engine.evaluate(
        parse_pod(load_single(str(pod_file), "Pod")),
        snapshot,
        parse_time(now) if now is not None else None,
    )
    assert_packs_alike(decision)
    result: dict[str, Any] = json.loads(json.dumps(decision.to_dict()))
    return result


CONFORMANCE: list[tuple[ModuleType, str]] = [
    (test_conformance_imagelocality, "test_vector"),
    (test_conformance_interpodaffinity, "test_vector"),
    (test_conformance_podtopologyspread, "test_vector"),
    (test_conformance_noderesources, "test_vector"),
    (test_conformance_noderesources, "test_the_explanation_adds_up_to_the_score"),
    (test_limitaware_conformance, "test_vector_through_cli"),
    (test_loadaware_conformance, "test_plugin_vector_through_cli"),
    (test_nrt_conformance, "test_vector_through_cli"),
]


def _cases() -> Iterator[Any]:
    """Each conformance test of ``CONFORMANCE`` with each of its parameters."""
    for module, name in CONFORMANCE:
        test: Callable[..., None] = getattr(module, name)
        [mark] = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
        argnames, argvalues = mark.args[0], mark.args[1]
        names = [argnames] if "," not in argnames and isinstance(argnames, str) else argnames
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        for k, values in enumerate(argvalues):
            values = values if len(names) > 1 else (values,)
            label = f"{module.__name__.rsplit('.', 1)[-1]}.{name}[{k}]"
            yield pytest.param(module, name, dict(zip(names, values, strict=True)), id=label)


@pytest.mark.parametrize(("module", "name", "arguments"), list(_cases()))
def test_conformance_decisions_pack_alike(
    module: ModuleType,
    name: str,
    arguments: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for caller in (module, podaffinity_vectors):  # the modules that run the CLI's evaluate
        if hasattr(caller, "evaluate"):
            monkeypatch.setattr(caller, "evaluate", _in_process)
    getattr(module, name)(tmp_path=tmp_path, **arguments)
