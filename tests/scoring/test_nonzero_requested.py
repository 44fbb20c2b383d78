"""Request-less pods count at kube-scheduler's non-zero defaults in NodeResourcesFit scoring.

Issue #16: against a real kube-scheduler, every disagreement was a MostAllocated choice between
nodes holding pods without resource requests. kube-scheduler scores them at 100m cpu / 200 MiB
memory per container that omits the key (``NodeInfo.NonZeroRequested``, built by
``PodInfo.CalculateResource`` in pkg/scheduler/framework/types.go; the incoming pod through
``calculatePodResourceRequest`` in noderesources/resource_allocation.go). Every expected score
below is computed by hand from upstream's formulas, written out in the comments.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.simulation.cache import EquivalenceCache
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    evaluate,
    make_container,
    make_node,
    make_pod,
    object_list,
    plugin_score,
    run_cli,
    write_json,
)
from tests.scoring.vector_objects import score_only_config

MI = 1 << 20
GI = 1 << 30
NOW = "2026-11-22T12:00:00Z"
MOST_ALLOCATED = score_only_config(
    "NodeResourcesFit",
    {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    },
)


def _cluster() -> list[dict[str, Any]]:
    """node-41 holds three request-less pods; node-34 one pod requesting 200m / 400 MiB."""
    objects = [
        make_node(name, {"cpu": 4000, "memory": 8 * GI, "pods": 110})
        for name in ("node-34", "node-41")
    ]
    objects += [
        make_pod(f"request-less-{i}", containers=[make_container("app")], node_name="node-41")
        for i in range(3)
    ]
    objects.append(
        make_pod(
            "sized",
            containers=[make_container("app", {"cpu": 200, "memory": 400 * MI})],
            node_name="node-34",
        )
    )
    return objects


def _incoming() -> dict[str, Any]:
    return make_pod("incoming", containers=[make_container("app", {"cpu": 500, "memory": GI})])


def test_most_allocated_counts_request_less_pods_at_the_defaults(tmp_path: Path) -> None:
    # MostAllocated per resource: min(req, alloc) * 100 / alloc (int); node: sum / 2 (int).
    # node-41: three pods at 100m / 200Mi each, plus the pod's 500m / 1024Mi:
    #   cpu 800 * 100 / 4000 = 20; memory 1624Mi * 100 / 8192Mi = 19 (19.8); (20 + 19) / 2 = 19.
    # node-34: 200m / 400Mi plus the pod:
    #   cpu 700 * 100 / 4000 = 17 (17.5); memory 1424Mi * 100 / 8192Mi = 17 (17.4); 17.
    # Counting the request-less pods as 0 would give node-41 cpu 12, memory 12, so 12: the
    # opposite ranking.
    decision = evaluate(tmp_path, _cluster(), _incoming(), config=MOST_ALLOCATED, now=NOW)
    scores = {
        name: (plugin_score(decision, name, "NodeResourcesFit") or {}).get("raw")
        for name in ("node-34", "node-41")
    }
    assert scores == {"node-34": 17, "node-41": 19}
    assert decision["selectedNode"] == "node-41"


def test_explanation_shows_the_non_zero_amounts_the_score_used(tmp_path: Path) -> None:
    decision = evaluate(tmp_path, _cluster(), _incoming(), config=MOST_ALLOCATED, now=NOW)
    node = next(n for n in decision["nodes"] if n["name"] == "node-41")
    detail = node["details"]["NodeResourcesFit"]
    cpu, memory = detail["resources"]["cpu"], detail["resources"]["memory"]
    assert (cpu["requested"], cpu["scoredRequested"], cpu["scoredPod"]) == (0, 300, 500)
    assert (memory["requested"], memory["scoredRequested"]) == (0, 600 * MI)


def _pod(name: str, **spec: Any) -> Any:
    return parse_pod(make_pod(name, **spec))


def test_init_containers_sidecars_and_overhead_follow_pod_requests() -> None:
    # Plain init container without requests, one app container asking for 50m only:
    #   containers cpu 50, memory 200Mi (defaulted); init cpu 100, memory 200Mi;
    #   max -> cpu 100, memory 200Mi; + overhead 10m / 10Mi -> (110, 210Mi).
    plain = _pod(
        "plain",
        containers=[make_container("app", {"cpu": 50})],
        init_containers=[make_container("init")],
        spec={"overhead": {"cpu": "10m", "memory": str(10 * MI)}},
    )
    assert plain.non_zero_requests == (110, 210 * MI)
    assert plain.requests.get("cpu") == 60  # max(50, 0) + 10: no default in real requests
    # A sidecar (restartPolicy Always) keeps running: it adds to the app containers.
    #   app 100m / 200Mi + sidecar 100m / 200Mi = 200m / 400Mi; the init peak (the sidecar
    #   alone) is smaller.
    sidecar = _pod(
        "sidecar",
        containers=[make_container("app")],
        init_containers=[make_container("proxy", restart_policy="Always")],
    )
    assert sidecar.non_zero_requests == (200, 400 * MI)
    # An explicit zero is not a missing key: it stays zero.
    explicit = _pod("zero", containers=[make_container("app", {"cpu": 0, "memory": 0})])
    assert explicit.non_zero_requests == (0, 0)


def test_simulated_placements_of_request_less_pods_raise_the_score() -> None:
    # Placing request-less pods onto node-34 (Reserve) must count them at the defaults, and the
    # equivalence cache must see the change. node-34 after two more such pods:
    #   cpu (200 + 200 + 500) * 100 / 4000 = 22 (22.5);
    #   memory (400Mi + 400Mi + 1024Mi) * 100 / 8192Mi = 22 (22.3); (22 + 22) / 2 = 22.
    snapshot = Snapshot.from_objects(_cluster(), warn=lambda _: None)
    engine = Engine(load_configuration(MOST_ALLOCATED))
    framework = engine.framework_for(incoming := parse_pod(_incoming()))
    cache = EquivalenceCache()
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)

    def raw(use_cache: bool) -> dict[str, int]:
        bound = cache.bind(incoming, snapshot, now) if use_cache else None
        decision = framework.evaluate(incoming, snapshot, now, bound)
        outcome = decision.scores[0]
        names = [snapshot.node_names[i] for i in decision.feasible]
        return dict(zip(names, outcome.raw.tolist(), strict=True))

    assert raw(True) == {"node-34": 17, "node-41": 19}
    node_34 = snapshot.index["node-34"]
    for i in range(2):
        snapshot.assume_pod(_pod(f"placed-{i}", containers=[make_container("app")]), node_34)
    assert raw(True) == raw(False) == {"node-34": 22, "node-41": 19}


def test_cli_simulate_places_by_the_non_zero_amounts(tmp_path: Path) -> None:
    # The whole path through the command line: the one pod goes where evaluate sends it.
    cluster = write_json(tmp_path / "cluster.json", object_list(_cluster()))
    workload = write_json(tmp_path / "workload.json", object_list([_incoming()]))
    config = write_json(tmp_path / "config.json", MOST_ALLOCATED)
    for extra in ([], ["--no-cache"]):
        result = run_cli(
            "simulate",
            *("--cluster", str(cluster), "--config", str(config), "--workload", str(workload)),
            *("--now", NOW, "--format", "json", *extra),
        )
        assert result.returncode == 0, result.stderr
        pods = json.loads(result.stdout)["runs"][0]["pods"]
        assert [p["selectedNode"] for p in pods] == ["node-41"]
