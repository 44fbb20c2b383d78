"""ImageLocality beyond the upstream vectors: spread after Node changes, the cache, explanations,
and bad ``status.images`` input."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.errors import InputError
from scoring.objects import parse_node, parse_pod
from scoring.simulation.cache import EquivalenceCache
from scoring.simulation.equivalence import equivalence_key
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod, single_profile_config

MB = 1 << 20
NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
STAR = [{"name": "*"}]
CONFIG = single_profile_config(
    {
        "preFilter": {"disabled": STAR},
        "filter": {"disabled": STAR},
        "preScore": {"disabled": STAR},
        "score": {"disabled": STAR, "enabled": [{"name": "ImageLocality"}]},
    }
)


def node(name: str, *images: tuple[list[str], int]) -> dict[str, Any]:
    manifest = make_node(name, {"cpu": 4000, "memory": 8 << 30, "pods": 110})
    manifest["status"]["images"] = [{"names": n, "sizeBytes": s} for n, s in images]
    return manifest


def pod(*images: str, init: tuple[str, ...] = ()) -> Any:
    return parse_pod(
        make_pod(
            "web",
            containers=[make_container(f"c{i}", image=x) for i, x in enumerate(images)],
            init_containers=[make_container(f"i{i}", image=x) for i, x in enumerate(init)],
        )
    )


APP = (["registry.example.com/app:2.0"], 900 * MB)


def scores(snapshot: Snapshot, incoming: Any, cache: EquivalenceCache | None = None) -> list[int]:
    framework = Engine(load_configuration(CONFIG)).framework_for(incoming)
    bound = None if cache is None else cache.bind(incoming, snapshot, NOW)
    decision = framework.evaluate(incoming, snapshot, NOW, bound)
    result: list[int] = decision.scores[0].raw.tolist()
    return result


def test_a_node_change_moves_the_spread_on_every_other_node() -> None:
    # 3 nodes, the image on a and b: 900M * 2/3 = 600M; 100 * (600M - 23M) / (1000M - 23M) = 59.
    # After b drops it: 900M * 1/3 = 300M on a; 100 * (300M - 23M) / 977M = 28.
    snapshot = Snapshot.from_objects([node("a", APP), node("b", APP), node("c")])
    incoming = pod("registry.example.com/app:2.0")
    cache = EquivalenceCache()
    assert scores(snapshot, incoming, cache) == scores(snapshot, incoming) == [59, 59, 0]
    snapshot.update_node(node("b"))
    assert scores(snapshot, incoming, cache) == scores(snapshot, incoming) == [28, 0, 0]


def test_an_untagged_image_matches_latest_and_every_container_counts() -> None:
    # Two containers with the same untagged image, one init container with another:
    # 3 containers -> maxThreshold 3000M; one node of two holds both images:
    # 2 * (800M * 1/2) + 600M * 1/2 = 1100M; 100 * (1100M - 23M) / (3000M - 23M) = 36.
    snapshot = Snapshot.from_objects(
        [
            node(
                "a", (["repo/app:latest", "repo/app@sha256:00"], 800 * MB), (["init:1"], 600 * MB)
            ),
            node("b"),
        ]
    )
    assert scores(snapshot, pod("repo/app", "repo/app", init=("init:1",))) == [36, 0]


def test_explanation_names_the_images_their_sizes_spread_and_sum() -> None:
    snapshot = Snapshot.from_objects([node("a", APP, (["other:1"], 50 * MB)), node("b", APP)])
    incoming = pod("registry.example.com/app:2.0", "missing:1")
    framework = Engine(load_configuration(CONFIG)).framework_for(incoming)
    decision = framework.evaluate(incoming, snapshot, NOW)
    detail = decision.details(0)["ImageLocality"]
    assert detail["containers"] == [
        {
            "container": "c0",
            "image": "registry.example.com/app:2.0",
            "sizeBytes": 900 * MB,
            "nodesWithImage": 2,
            "spread": 1.0,
            "scaled": 900 * MB,
        },
        {"container": "c1", "image": "missing:1"},
    ]
    # 900M against maxThreshold 2000M: 100 * (900M - 23M) / (2000M - 23M) = 44.
    assert (detail["sumBeforeScaling"], detail["maxThreshold"], detail["score"]) == (
        900 * MB,
        2000 * MB,
        44,
    )
    assert decision.scores[0].raw.tolist() == [44, 44]
    assert {i["name"]: i["spread"] for i in detail["nodeImages"]} == {
        "registry.example.com/app:2.0": 1.0,
        "other:1": 0.5,
    }


def test_images_are_part_of_the_equivalence_class() -> None:
    assert equivalence_key(pod("app:1")) != equivalence_key(pod("app:2"))
    assert equivalence_key(pod("app:1")) == equivalence_key(pod("app:1"))


@pytest.mark.parametrize(
    ("images", "field"),
    [
        ({"names": ["a"], "sizeBytes": "big"}, "status.images[0].sizeBytes"),
        ({"names": ["a"], "sizeBytes": -1}, "status.images[0].sizeBytes"),
        ({"names": "a", "sizeBytes": 1}, "status.images[0].names"),
        ({"names": [7], "sizeBytes": 1}, "status.images[0].names[0]"),
    ],
)
def test_bad_node_images_name_the_field(images: dict[str, Any], field: str) -> None:
    manifest = make_node("a", {"cpu": 1000})
    manifest["status"]["images"] = [images]
    with pytest.raises(InputError, match=re.escape(f"Node a: {field}:")):
        parse_node(manifest)


def test_a_bad_container_image_names_the_field() -> None:
    manifest = make_pod("web", containers=[make_container("c")])
    manifest["spec"]["containers"][0]["image"] = ["not", "a", "string"]
    with pytest.raises(InputError, match=r"spec.containers\[0\].image"):
        parse_pod(manifest)
