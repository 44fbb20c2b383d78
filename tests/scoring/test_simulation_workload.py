"""Controllers expand into the pods they would create, named as their controllers name them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scoring.errors import InputError
from scoring.objects import parse_pod
from scoring.simulation.workload import (
    ALPHANUMS,
    expand_workload,
    fnv32a,
    safe_encode,
    template_hash,
)
from tests.scoring.builders import make_container, make_pod

SUFFIX = f"[{ALPHANUMS}]{{5}}"


def template(cpu: str = "250m") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}, "annotations": {"team": "shop"}},
        "spec": {"containers": [make_container("app", {"cpu": cpu})]},
    }


def controller(kind: str, name: str = "web", **spec: Any) -> dict[str, Any]:
    group = "batch/v1" if kind == "Job" else "apps/v1"
    return {
        "apiVersion": group,
        "kind": kind,
        "metadata": {"name": name, "namespace": "shop", "uid": f"{kind.lower()}-uid"},
        "spec": {"template": template(), **spec},
    }


def test_fnv32a_and_safe_encoding_match_the_reference_values() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C  # FNV-1a 32 test vector
    assert safe_encode("0123456789") == "4567" + "89bcdf"  # digits land on these characters


def test_a_deployment_becomes_a_replicaset_of_hashed_name_and_its_pods() -> None:
    pods = expand_workload([controller("Deployment", replicas=3)])
    digest = template_hash(template())
    assert re.fullmatch("[4-9bcdf]{1,10}", digest)
    assert len(pods) == 3
    for pod in pods:
        meta = pod["metadata"]
        assert re.fullmatch(f"web-{digest}-{SUFFIX}", meta["name"])
        assert meta["generateName"] == f"web-{digest}-"
        assert meta["namespace"] == "shop"
        assert meta["labels"] == {"app": "web", "pod-template-hash": digest}
        assert meta["annotations"] == {"team": "shop"}
        (owner,) = meta["ownerReferences"]
        assert owner["kind"] == "ReplicaSet" and owner["name"] == f"web-{digest}"
        assert owner["controller"] is True
        assert pod["spec"] == template()["spec"]
        assert pod["status"] == {"phase": "Pending"}
    assert len({p["metadata"]["name"] for p in pods}) == 3
    assert len({p["metadata"]["uid"] for p in pods}) == 3


def test_the_template_hash_follows_the_template_and_the_collision_count() -> None:
    assert template_hash(template("1")) != template_hash(template("2"))
    assert template_hash(template(), 1) != template_hash(template())
    changed = controller("Deployment")
    changed["status"] = {"collisionCount": 1}
    name = expand_workload([changed])[0]["metadata"]["ownerReferences"][0]["name"]
    assert name == f"web-{template_hash(template(), 1)}"


def test_a_replicaset_names_pods_after_itself_and_owns_them() -> None:
    pods = expand_workload([controller("ReplicaSet", replicas=2)])
    assert [re.fullmatch(f"web-{SUFFIX}", p["metadata"]["name"]) is not None for p in pods] == [
        True,
        True,
    ]
    owner = pods[0]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("ReplicaSet", "web", "replicaset-uid")


def test_a_statefulset_numbers_its_pods_from_the_ordinals_start() -> None:
    pods = expand_workload(
        [controller("StatefulSet", replicas=3, serviceName="web-svc", ordinals={"start": 2})]
    )
    assert [p["metadata"]["name"] for p in pods] == ["web-2", "web-3", "web-4"]
    first = pods[0]
    assert first["spec"]["hostname"] == "web-2" and first["spec"]["subdomain"] == "web-svc"
    labels = first["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-2"
    assert labels["apps.kubernetes.io/pod-index"] == "2"
    assert labels["controller-revision-hash"] == f"web-{template_hash(template())}"
    assert first["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert "hostname" not in template()["spec"]  # the template itself is untouched


@pytest.mark.parametrize(
    ("spec", "count"),
    [({}, 1), ({"parallelism": 4}, 4), ({"parallelism": 4, "completions": 2}, 2)],
)
def test_a_job_runs_parallelism_pods_capped_by_completions(
    spec: dict[str, Any], count: int
) -> None:
    pods = expand_workload([controller("Job", **spec)])
    assert len(pods) == count
    for pod in pods:
        assert re.fullmatch(f"web-{SUFFIX}", pod["metadata"]["name"])
        labels = pod["metadata"]["labels"]
        assert labels["batch.kubernetes.io/job-name"] == "web"
        assert labels["batch.kubernetes.io/controller-uid"] == "job-uid"
        owner = pod["metadata"]["ownerReferences"][0]
        assert (owner["apiVersion"], owner["kind"]) == ("batch/v1", "Job")


def test_an_indexed_job_puts_the_index_in_names_labels_and_annotations() -> None:
    pods = expand_workload([controller("Job", parallelism=2, completionMode="Indexed")])
    for index, pod in enumerate(pods):
        assert re.fullmatch(f"web-{index}-{SUFFIX}", pod["metadata"]["name"])
        key = "batch.kubernetes.io/job-completion-index"
        assert pod["metadata"]["labels"][key] == pod["metadata"]["annotations"][key] == str(index)


def test_long_names_are_cut_to_58_characters_before_the_suffix() -> None:
    name = "x" * 70
    pod = expand_workload([controller("ReplicaSet", name=name)])[0]
    assert re.fullmatch(f"x{{58}}{SUFFIX}", pod["metadata"]["name"])


def test_expansion_is_deterministic_for_a_seed() -> None:
    objects = [controller("Deployment", replicas=5), controller("Job", name="batch")]
    first = expand_workload(objects, seed=3)
    assert first == expand_workload(objects, seed=3)
    assert first != expand_workload(objects, seed=4)


def test_generated_names_do_not_clash_with_given_pods() -> None:
    given = make_pod("web-bbbbb", namespace="shop")
    pods = expand_workload([given, controller("ReplicaSet", replicas=40)], seed=0)
    names = [p["metadata"]["name"] for p in pods]
    assert len(names) == len(set(names)) == 41
    assert pods[0] is given


def test_pods_parse_and_share_one_controller() -> None:
    pods = [parse_pod(p) for p in expand_workload([controller("Deployment", replicas=2)])]
    assert pods[0].controller == pods[1].controller
    assert pods[0].requests == {"cpu": 250}


def test_other_kinds_are_skipped_with_a_warning() -> None:
    warnings: list[str] = []
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}
    assert expand_workload([service], warn=warnings.append) == []
    assert warnings == ["warning: ignoring v1 Service default/web: kind not read"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o["spec"].pop("template"), "Deployment shop/web: spec.template.spec: required"),
        (
            lambda o: o["spec"].update(replicas=-1),
            "Deployment shop/web: spec.replicas: must be >= 0, got -1",
        ),
        (
            lambda o: o["spec"].update(replicas="3"),
            "Deployment shop/web: spec.replicas: expected int, got '3'",
        ),
        (
            lambda o: o["spec"].update(replicas=True),
            "Deployment shop/web: spec.replicas: expected int, got True",
        ),
        (lambda o: o["metadata"].pop("name"), "Deployment shop/<unnamed>: metadata.name: required"),
    ],
)
def test_bad_controllers_are_input_errors_naming_object_and_field(
    change: Any, message: str
) -> None:
    deployment = controller("Deployment")
    change(deployment)
    with pytest.raises(InputError) as caught:
        expand_workload([deployment])
    assert str(caught.value) == message


def test_zero_replicas_make_no_pods() -> None:
    assert expand_workload([controller("Deployment", replicas=0)]) == []


def test_a_limit_stops_expansion_before_the_pods_are_made() -> None:
    from scoring.simulation.workload import TooManyPods

    huge = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "huge"},
        "spec": {"replicas": 10**12, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    with pytest.raises(TooManyPods) as caught:
        expand_workload([huge], limit=5)
    assert caught.value.limit == 5 and str(caught.value) == "the workload has more than 5 pods"
    huge["spec"]["replicas"] = 5
    assert len(expand_workload([huge], limit=5)) == 5
