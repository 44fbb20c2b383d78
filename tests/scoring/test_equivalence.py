"""Equivalence classes: exactly the scheduling-relevant pod fields decide a pod's class."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from scoring.containers import Container, ContainerPort
from scoring.objects import Pod, parse_pod
from scoring.simulation.equivalence import (
    HASHED_POD_FIELDS,
    IGNORED_POD_FIELDS,
    class_label,
    equivalence_key,
)
from scoring.simulation.workload import expand_workload
from tests.scoring.builders import make_container, make_pod

Manifest = dict[str, Any]


def replica(name: str = "web-1") -> Manifest:
    pod = make_pod(
        name,
        namespace="shop",
        containers=[make_container("app", {"cpu": 500, "memory": "1Gi"}, {"cpu": 1000})],
        labels={"app": "web"},
        annotations={"kubectl.kubernetes.io/restartedAt": "2026-11-22T10:00:00Z"},
        spec={"priority": 100},
    )
    pod["metadata"]["uid"] = f"uid-{name}"
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f", "uid": "rs-1"}
    ]
    return pod


def key(manifest: Manifest) -> tuple[Any, ...]:
    return equivalence_key(parse_pod(manifest))


def test_every_pod_field_is_hashed_or_deliberately_ignored() -> None:
    """A new Pod field fails here until someone decides whether plugins may read it."""
    fields = {f.name for f in dataclasses.fields(Pod)}
    assert fields == HASHED_POD_FIELDS | IGNORED_POD_FIELDS
    assert not HASHED_POD_FIELDS & IGNORED_POD_FIELDS


# A different value for every Container field (plugins read them all: ImageLocality the image).
OTHER_CONTAINER_VALUES: dict[str, Any] = {
    "name": "other",
    "image": "registry.example.com/other:1",
    "requests": {"cpu": 1},
    "limits": {"cpu": 1},
    "ports": (ContainerPort(8080, "TCP", ""),),
    "restartable": True,
}


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Container)])
def test_every_container_field_splits_the_class(field: str) -> None:
    """A new Container field fails here (no value above) until the class key covers it."""
    pod = parse_pod(replica())
    changed = dataclasses.replace(pod.containers[0], **{field: OTHER_CONTAINER_VALUES[field]})
    resources = dataclasses.replace(pod.resources, containers=(changed,))
    assert equivalence_key(dataclasses.replace(pod, resources=resources)) != key(replica())


def test_replicas_differing_only_in_identity_share_a_class() -> None:
    other = replica("web-2")
    other["spec"]["hostname"] = "web-2"
    other["status"]["phase"] = "Pending"
    assert key(replica()) == key(other)


def test_equal_quantities_written_differently_share_a_class() -> None:
    other = replica()
    other["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.5"
    other["spec"]["containers"][0]["resources"]["requests"]["memory"] = "1024Mi"
    assert key(replica()) == key(other)


def _set(path: str, value: Any) -> Callable[[Manifest], None]:
    def change(manifest: Manifest) -> None:
        *parents, last = path.split(".")
        target = manifest
        for part in parents:
            target = target.setdefault(part, {}) if not part.isdigit() else target[int(part)]
        target[last] = value

    return change


CHANGES: dict[str, Callable[[Manifest], None]] = {
    "cpu request": _set("spec.containers.0.resources.requests.cpu", "600m"),
    "memory limit": _set("spec.containers.0.resources.limits.memory", "2Gi"),
    "extra container": lambda m: m["spec"]["containers"].append(make_container("side")),
    "container image": _set("spec.containers.0.image", "registry.example.com/web:2.0"),
    "init container image": lambda m: m["spec"].update(
        initContainers=[make_container("init", image="registry.example.com/migrate:2")]
    ),
    "init container": _set("spec.initContainers", [make_container("init", {"cpu": 2000})]),
    "sidecar restart policy": lambda m: m["spec"].update(
        initContainers=[make_container("proxy", {"cpu": 100}, restart_policy="Always")]
    ),
    "host port": _set("spec.containers.0.ports", [{"containerPort": 80, "hostPort": 8080}]),
    "host network": lambda m: m["spec"].update(
        hostNetwork=True,
        containers=[{**m["spec"]["containers"][0], "ports": [{"containerPort": 9}]}],
    ),
    "overhead": _set("spec.overhead", {"cpu": "100m"}),
    "node selector": _set("spec.nodeSelector", {"zone": "a"}),
    "node affinity": _set(
        "spec.affinity",
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": []}}
                ]
            }
        },
    ),
    "tolerations": _set("spec.tolerations", [{"key": "gpu", "operator": "Exists"}]),
    "priority": _set("spec.priority", 9500),
    "scheduler name": _set("spec.schedulerName", "batch-scheduler"),
    "node name": _set("spec.nodeName", "n1"),
    "namespace": _set("metadata.namespace", "other"),
    "qos status": _set("status.qosClass", "Guaranteed"),
    "koordinator priority label": lambda m: m["metadata"]["labels"].update(
        {"koordinator.sh/priority-class": "koord-batch"}
    ),
    "koordinator qos label": lambda m: m["metadata"]["labels"].update(
        {"koordinator.sh/qosClass": "BE"}
    ),
    "load estimation annotation": lambda m: m["metadata"]["annotations"].update(
        {"scheduling.koordinator.sh/load-estimated-scaling-factors": '{"cpu": 50}'}
    ),
    "DaemonSet owner": lambda m: m["metadata"]["ownerReferences"][0].update(kind="DaemonSet"),
    # Label selectors (spreading, Service selection, matchLabelKeys) may read any label.
    "any label": lambda m: m["metadata"]["labels"].update({"pod-template-hash": "abc"}),
    "StatefulSet pod-name label": lambda m: m["metadata"]["labels"].update(
        {"statefulset.kubernetes.io/pod-name": "web-2"}
    ),
    "topology spread constraints": _set(
        "spec.topologySpreadConstraints",
        [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
    ),
    "controller": lambda m: m["metadata"]["ownerReferences"][0].update(
        controller=True, name="web-8e2a"
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_scheduling_relevant_difference_splits_the_class(change: str) -> None:
    other = copy.deepcopy(replica())
    CHANGES[change](other)
    assert key(replica()) != key(other)


def test_a_template_change_splits_one_controllers_pods() -> None:
    """The seed's caveat: after a rollout starts, old and new revisions coexist."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "d-1"},
        "spec": {
            "replicas": 2,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": replica()["spec"]},
        },
    }
    old = [parse_pod(p) for p in expand_workload([deployment])]
    changed = json.loads(json.dumps(deployment))
    changed["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    new = [parse_pod(p) for p in expand_workload([changed], seed=1)]
    assert equivalence_key(old[0]) == equivalence_key(old[1])
    assert equivalence_key(new[0]) == equivalence_key(new[1])
    assert equivalence_key(old[0]) != equivalence_key(new[0])


def test_unrelated_annotations_do_not_split_a_class() -> None:
    other = replica()
    other["metadata"]["annotations"]["prometheus.io/scrape"] = "true"
    assert key(replica()) == key(other)


def test_class_label_names_the_controller() -> None:
    assert class_label(parse_pod(replica())) == "Pod shop/web-1"  # not controller: true
    controlled = replica()
    controlled["metadata"]["ownerReferences"][0]["controller"] = True
    assert class_label(parse_pod(controlled)) == "ReplicaSet shop/web-7d9f"
