"""Pushing a ConfigMap key (the KubeSchedulerConfiguration): create, update, no-op, remove."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from policy.clusters.gateway.apply import (
    apply_configmap_key,
    plan_configmap_key,
    read_configmap,
)
from policy.clusters.gateway.changes import Change
from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.errors import NotFoundError
from tests.gateway.kubeserver import create, ensure_namespaces

NS = "kube-system"
KEY = "scheduler-config.yaml"
CONFIG_V1 = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""
CONFIG_V2 = (
    CONFIG_V1 + "  plugins:\n    score:\n      enabled:\n      - name: LoadAwareScheduling\n"
)


@pytest.fixture
def name(admin: Connection, unique: Callable[[str], str]) -> str:
    ensure_namespaces(admin, [NS])
    return unique("scheduler-config")


def test_creates_a_missing_configmap(admin: Connection, name: str) -> None:
    plan = plan_configmap_key(admin, NS, name, KEY, CONFIG_V1)
    assert plan.changes == [Change("ConfigMap", NS, name, f"data[{KEY}]", None, CONFIG_V1)]
    assert plan.changes[0].action == "add" and plan.changes[0].resource_version is None
    assert plan.changes[0].diff.startswith("--- /dev/null\n+++ schedboard: ConfigMap/")

    result = apply_configmap_key(admin, NS, name, KEY, CONFIG_V1, plan=plan)
    assert result.applied == plan.changes
    assert read_configmap(admin, NS, name)["data"] == {KEY: CONFIG_V1}  # type: ignore[index]


def test_an_unchanged_key_is_not_written_again(admin: Connection, name: str) -> None:
    apply_configmap_key(admin, NS, name, KEY, CONFIG_V1)
    version = read_configmap(admin, NS, name)["metadata"]["resourceVersion"]  # type: ignore[index]

    assert not plan_configmap_key(admin, NS, name, KEY, CONFIG_V1)
    assert apply_configmap_key(admin, NS, name, KEY, CONFIG_V1).applied == []
    assert read_configmap(admin, NS, name)["metadata"]["resourceVersion"] == version  # type: ignore[index]


def test_updates_one_key_and_keeps_the_others(admin: Connection, name: str) -> None:
    other = {"other.yaml": "owner: someone-else\n", "notes": "keep me"}
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS},
            "data": {**other, KEY: CONFIG_V1},
        },
    )

    plan = plan_configmap_key(admin, NS, name, KEY, CONFIG_V2)
    [change] = plan.changes
    assert (change.action, change.before, change.after) == ("update", CONFIG_V1, CONFIG_V2)
    assert "+  plugins:\n" in change.diff and "-" + CONFIG_V1.splitlines()[0] not in change.diff

    assert apply_configmap_key(admin, NS, name, KEY, CONFIG_V2, plan=plan).applied == [change]
    assert read_configmap(admin, NS, name)["data"] == {**other, KEY: CONFIG_V2}  # type: ignore[index]


def test_none_removes_the_key_only(admin: Connection, name: str) -> None:
    create(
        admin,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS},
            "data": {"other": "x", KEY: CONFIG_V1},
        },
    )
    [change] = apply_configmap_key(admin, NS, name, KEY, None).applied
    assert change.action == "remove"
    assert read_configmap(admin, NS, name)["data"] == {"other": "x"}  # type: ignore[index]
    assert not plan_configmap_key(admin, NS, name, KEY, None)


def test_a_stale_dry_run_is_replanned(admin: Connection, name: str) -> None:
    """A confirmed dry-run applied after someone changed the ConfigMap: the write is planned
    again from the fresh object (their change kept), not forced."""
    apply_configmap_key(admin, NS, name, KEY, CONFIG_V1)
    plan = plan_configmap_key(admin, NS, name, KEY, CONFIG_V2)
    current = read_configmap(admin, NS, name)
    assert current is not None
    current["data"]["added-meanwhile"] = "yes"
    admin.request("PUT", f"/api/v1/namespaces/{NS}/configmaps/{name}", body=current)

    [applied] = apply_configmap_key(admin, NS, name, KEY, CONFIG_V2, plan=plan).applied
    assert applied == plan.changes[0]
    assert read_configmap(admin, NS, name)["data"] == {KEY: CONFIG_V2, "added-meanwhile": "yes"}  # type: ignore[index]


def test_a_missing_namespace_fails_with_the_api_message(
    admin: Connection, unique: Callable[[str], str]
) -> None:
    with pytest.raises(NotFoundError, match=r'namespaces "nowhere-.*" not found') as info:
        apply_configmap_key(admin, unique("nowhere"), "cm", KEY, CONFIG_V1)
    assert info.value.status == 404
