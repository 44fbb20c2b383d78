"""Differential test: a real kube-scheduler v1.20.2 and the engine decide the same pods.

A real kube-scheduler (built from the same Debian source package as the test kube-apiserver)
binds varied pods one at a time on nodes made for this test. Before each pod is created the
cluster is read back; the engine then evaluates the pod, as the server stored it, on that
snapshot with the matched configuration. For every pod the node the scheduler chose must be
among the engine's top-scored ties (kube-scheduler picks among ties at random), or both must
find no node, with the same per-reason node counts in the scheduler's FailedScheduling message
as the engine's first-failure counts.

The engine reads the scheduler's own ``kubescheduler.config.k8s.io/v1beta1`` document for
``kube-scheduler@1.20``, so it scores with 1.20's semantics (the v1beta1-only resource scorers,
overcommitted resources scoring 0); docs/differential.md lists what still differs and how the
workload avoids it.
"""

from __future__ import annotations

import contextlib
import copy
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.errors import NotFoundError
from policy.clusters.gateway.informer import ClusterInformer
from scoring.config import Target, load_configuration
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from tests.gateway import kubeserver
from tests.gateway.differential_workload import (
    LEAST,
    MOST,
    NAMESPACE,
    differential_nodes,
    differential_pods,
)
from tests.gateway.kubeserver import Json, KubeServer, create, ensure_namespaces

KUBE_1_20 = Target("kube-scheduler", "1.20")

# The scheduler's score plugins, with weights, for the two profiles (1.20 names).
SCORES_120 = {
    name: [
        (scorer, 1),
        ("NodeResourcesBalancedAllocation", 1),
        ("NodeAffinity", 1),
        ("TaintToleration", 1),
    ]
    for name, scorer in (
        (LEAST, "NodeResourcesLeastAllocated"),
        (MOST, "NodeResourcesMostAllocated"),
    )
}
BIND_TIMEOUT = 30.0


def scheduler_profiles() -> list[Json]:
    """v1beta1 profiles: default filters, only the matched score plugins."""
    return [
        {
            "schedulerName": name,
            "plugins": {
                "score": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": plugin, "weight": weight} for plugin, weight in scores],
                }
            },
        }
        for name, scores in SCORES_120.items()
    ]


@dataclass
class Outcome:
    """What the scheduler did with one pod: its node, or its FailedScheduling message."""

    node: str | None
    message: str | None


def pod_path(name: str) -> str:
    return f"/api/v1/namespaces/{NAMESPACE}/pods/{name}".rstrip("/")


def wait_for_scheduler(admin: Connection, name: str) -> Outcome:
    path = pod_path(name)
    deadline = time.monotonic() + BIND_TIMEOUT
    while time.monotonic() < deadline:
        pod = admin.request("GET", path)
        if pod["spec"].get("nodeName"):
            return Outcome(pod["spec"]["nodeName"], None)
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("reason") == (
                "Unschedulable"
            ):
                return Outcome(None, condition.get("message", ""))
        time.sleep(0.05)
    raise AssertionError(f"kube-scheduler neither bound nor refused pod {name}")


_COUNT = re.compile(r"(\d+) (.+)")
# Reasons whose words changed since 1.20 (docs/differential.md): kube-scheduler 1.20's text
# and the 1.35 text the engine gives for the same failure (1.35 no longer names the taint).
_TEXT_135 = [
    (
        re.compile(r"node\(s\) had taint \{.*\}, that the pod didn't tolerate"),
        "node(s) had untolerated taint(s)",
    ),
    (
        re.compile(r"node\(s\) didn't match Pod's node affinity$"),
        "node(s) didn't match Pod's node affinity/selector",
    ),
]


def reason_counts(message: str) -> tuple[int, Counter[str]]:
    """("0/N nodes are available: 3 Insufficient cpu, 1 node(s) ….") → (N, reason → count)."""
    head, _, tail = message.partition(": ")
    total = int(head.split("/")[1].split()[0])
    counts: Counter[str] = Counter()
    for part in re.split(r", (?=\d+ )", tail.rstrip(".")):
        match = _COUNT.fullmatch(part.strip())
        assert match, f"unexpected FailedScheduling part {part!r} in {message!r}"
        counts[match.group(2)] += int(match.group(1))
    return total, counts


# 1.20's InterPodAffinity adds this generic line beside the specific one for every node it
# refuses; 1.35 gives only the specific one.
_GENERIC_120 = "node(s) didn't match pod affinity/anti-affinity"


def as_135(counts: tuple[int, Counter[str]]) -> tuple[int, Counter[str]]:
    """A 1.20 FailedScheduling histogram in 1.35's words (per-taint lines summed)."""
    total, by_reason = counts
    translated: Counter[str] = Counter()
    for reason, count in by_reason.items():
        if reason == _GENERIC_120:
            continue
        for pattern, text in _TEXT_135:
            reason = pattern.sub(text, reason)
        translated[reason] += count
    return total, translated


@pytest.fixture(scope="module")
def differential_scheduler(
    kube: KubeServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The running scheduler's configuration file (its own v1beta1 document)."""
    directory = tmp_path_factory.mktemp("differential-scheduler")
    with kubeserver.kube_scheduler(
        kube, directory, scheduler_profiles(), percentageOfNodesToScore=100
    ) as log:
        yield log.parent / "config.yaml"


@pytest.fixture
def differential_cluster(admin: Connection, unique: Callable[[str], str]) -> Iterator[list[str]]:
    """This test's nodes (and namespace), removed afterwards with every pod on them."""
    ensure_namespaces(admin, [NAMESPACE])
    nodes = differential_nodes(unique("diff"))
    for node in nodes:
        kubeserver.seed_node(admin, node)
    names = [node["metadata"]["name"] for node in nodes]
    yield names
    for pod in admin.request("GET", pod_path(""))["items"]:
        admin.request("DELETE", pod_path(pod["metadata"]["name"]))
    for name in names:
        with contextlib.suppress(NotFoundError):
            admin.request("DELETE", f"/api/v1/nodes/{name}")


def refusal(decision: Any, node: str) -> str:
    """Why the engine filtered ``node`` (empty if it did not)."""
    index = decision.cycle.snapshot.index.get(node)
    if index is None:
        return " (the engine's snapshot has no such node)"
    reasons = [
        f"{outcome.plugin}: {outcome.result.status(index).message}"
        for outcome in decision.filters
        if not outcome.result.passed[index]
    ]
    return f" (engine filtered it: {'; '.join(reasons)})" if reasons else ""


def engine_verdict(engine: Engine, objects: list[Json], pod: Json) -> Any:
    snapshot = Snapshot.from_objects(objects, warn=lambda _: None)
    return engine.evaluate(parse_pod(pod), snapshot, datetime.now(UTC))


def test_the_engine_agrees_with_kube_scheduler_binding_for_binding(
    differential_scheduler: Path,
    differential_cluster: list[str],
    admin: Connection,
    seeded: list[Json],
) -> None:
    config = load_configuration(
        differential_scheduler.read_text(),
        source_name=str(differential_scheduler),
        target=KUBE_1_20,
    )
    engine = Engine(config)
    disagreements: list[str] = []
    outcomes: Counter[str] = Counter()
    for index, manifest in enumerate(differential_pods(differential_cluster)):
        objects = ClusterInformer().read(admin).objects  # listed: what the server has now
        created = create(admin, copy.deepcopy(manifest))
        outcome = wait_for_scheduler(admin, created["metadata"]["name"])
        decision = engine_verdict(engine, objects, created)
        label = f"#{index} {created['metadata']['name']}"
        if outcome.node is not None:
            outcomes["bound"] += 1
            comparison = decision.compare(outcome.node)
            if not comparison.agrees:
                disagreements.append(
                    f"{label}: scheduler chose {outcome.node}, engine ranked it "
                    f"{comparison.rank} (gap {comparison.gap}){refusal(decision, outcome.node)}; "
                    f"engine chose {decision.selected_node}"
                )
        else:
            outcomes["unschedulable"] += 1
            ours = decision.summary()
            if decision.selected_index is not None or ours is None:
                disagreements.append(
                    f"{label}: scheduler found no node ({outcome.message}); engine chose "
                    f"{decision.selected_node}"
                )
            elif reason_counts(ours) != as_135(reason_counts(outcome.message or "")):
                disagreements.append(f"{label}: scheduler: {outcome.message}; engine: {ours}")
            admin.request(
                "DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{created['metadata']['name']}"
            )
    assert sum(outcomes.values()) >= 100 and outcomes["bound"] and outcomes["unschedulable"]
    assert not disagreements, "\n".join(disagreements)


def test_failed_scheduling_messages_are_parsed() -> None:
    message = (
        "0/14 nodes are available: 1 node(s) had taint {dedicated: batch}, that the pod didn't "
        "tolerate, 13 Insufficient cpu."
    )
    assert reason_counts(message) == (
        14,
        Counter(
            {
                "node(s) had taint {dedicated: batch}, that the pod didn't tolerate": 1,
                "Insufficient cpu": 13,
            }
        ),
    )


def test_the_scheduler_profiles_load_for_kube_scheduler_1_20() -> None:
    """The v1beta1 document the scheduler gets is valid for 1.20 and scores with 1.20's
    plugins under their own names and weights."""
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": scheduler_profiles(),
    }
    config = load_configuration(document, target=KUBE_1_20)
    for profile in config.profiles:
        scores = [(ref.name, ref.weight) for ref in profile.plugins["score"]]
        assert scores == SCORES_120[profile.scheduler_name]
