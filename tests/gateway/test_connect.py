"""Connecting a cluster in one step, against the real kube-apiserver: ``manage.py add_cluster``
and ``POST /api/v1/clusters/`` reach the server, find the scheduler's ConfigMap where the usual
installations put it, name every permission schedboard lacks, and store the cluster."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from policy.accounts.models import PolicyChange
from policy.clusters.gateway.connection import Connection
from policy.clusters.models import Cluster
from tests.gateway.kubeserver import KubeServer, create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("rbac")]


def server_version(kube: KubeServer) -> str:
    with kube.connect() as admin:
        return str(admin.version()["gitVersion"])


def add(*args: str) -> str:
    out = StringIO()
    call_command("add_cluster", *args, stdout=out)
    return out.getvalue()


def test_the_admin_connects_and_koordinators_configmap_is_found(
    kube: KubeServer, unique: Callable[[str], str]
) -> None:
    name = unique("koord")
    out = add(name, "--kubeconfig", str(kube.kubeconfig), "--context", "admin")
    assert f"connected to Kubernetes {server_version(kube)};" in out
    assert (
        "found the scheduler configuration at koordinator-system/koord-scheduler-config:"
        "koord-scheduler-config (Koordinator's Helm chart)" in out
    )
    assert "missing permission" not in out
    cluster = Cluster.objects.get(name=name)
    assert (cluster.kind, cluster.kubeconfig_context) == ("kubeconfig", "admin")
    assert (
        cluster.scheduler_config_namespace,
        cluster.scheduler_config_name,
        cluster.scheduler_config_key,
    ) == ("koordinator-system", "koord-scheduler-config", "koord-scheduler-config")
    assert PolicyChange.objects.filter(object_id=cluster.pk, action="create").exists()


def test_the_shipped_rbac_is_exactly_enough(kube: KubeServer, unique: Callable[[str], str]) -> None:
    """As the service account deploy/rbac.yaml sets up: nothing missing for its ConfigMaps,
    and every verb named for a ConfigMap it was not granted."""
    config = str(kube.kubeconfig)
    out = add(unique("sa-one"), "--kubeconfig", config, "--context", "schedboard")
    assert "missing permission" not in out and "koord-scheduler-config (Koordinator's" in out
    other = "kube-system/my-scheduler:scheduler.yaml"
    out = add(
        unique("sa-two"), "--kubeconfig", config, "--context", "schedboard",
        "--scheduler-configmap", other,
    )  # fmt: skip
    assert "missing permission: get configmaps kube-system/my-scheduler" in out
    assert "missing permission: update configmaps kube-system/my-scheduler" in out
    assert "apply deploy/rbac.yaml" in out


def test_an_unreachable_server_or_a_bad_argument_stores_nothing(
    kube: KubeServer, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    elsewhere = kube.kubeconfig_for("https://127.0.0.1:1", tmp_path / "kubeconfig")
    with pytest.raises(CommandError, match="cannot connect"):
        add(unique("down"), "--kubeconfig", str(elsewhere))
    with pytest.raises(CommandError, match="expected NAMESPACE/NAME"):
        add(unique("x"), "--kubeconfig", str(kube.kubeconfig), "--scheduler-configmap", "nope")
    assert not Cluster.objects.exists()


def configmap(admin: Connection, name: str, keys: list[str]) -> str:
    """A ConfigMap in kube-system holding ``keys``; its NAMESPACE/NAME."""
    data = dict.fromkeys(keys, "{}")
    meta = {"name": name, "namespace": "kube-system"}
    create(admin, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
    return f"kube-system/{name}"


def stored_key(name: str) -> str:
    return str(Cluster.objects.get(name=name).scheduler_config_key)


def test_a_configmap_named_without_its_key_gets_the_known_key_or_its_only_one(
    kube: KubeServer, admin: Connection, unique: Callable[[str], str]
) -> None:
    """Koordinator's chart location keeps its chart's key, not ``config.yaml``; a ConfigMap of
    one key is read at that key."""
    config = str(kube.kubeconfig)
    chart = unique("chart")
    out = add(chart, "--kubeconfig", config, "--scheduler-configmap",
              "koordinator-system/koord-scheduler-config")  # fmt: skip
    assert stored_key(chart) == "koord-scheduler-config", out
    single = configmap(admin, unique("one-key"), ["sched.yaml"])
    own = unique("own")
    add(own, "--kubeconfig", config, "--scheduler-configmap", single)
    assert stored_key(own) == "sched.yaml"


def test_a_configmap_named_without_its_key_is_refused_when_the_key_cannot_be_told(
    kube: KubeServer,
    admin: Connection,
    api_client: Any,
    superuser: User,
    unique: Callable[[str], str],
) -> None:
    """Several keys, none, or no such ConfigMap: refused naming what is there, nothing stored."""
    config = str(kube.kubeconfig)
    several = configmap(admin, unique("two-keys"), ["b.yaml", "a.yaml"])
    with pytest.raises(CommandError, match=r"holds the keys a\.yaml, b\.yaml; name the sched"):
        add(unique("several"), "--kubeconfig", config, "--scheduler-configmap", several)
    empty = configmap(admin, unique("empty"), [])
    with pytest.raises(CommandError, match="holds no data"):
        add(unique("empty"), "--kubeconfig", config, "--scheduler-configmap", empty)
    api_client.force_login(superuser)
    body = {
        "name": unique("absent"),
        "kind": "kubeconfig",
        "kubeconfig_path": config,
        "scheduler_configmap": "kube-system/no-such-configmap",
    }
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 400, response.content
    [message] = response.json()["scheduler_configmap"]
    assert "kube-system/no-such-configmap: cannot read it" in message
    assert "name the key: kube-system/no-such-configmap:KEY" in message
    assert not Cluster.objects.exists()


@pytest.mark.parametrize(
    ("location", "part"),
    [
        ("Kube_System/sched:config.yaml", "namespace 'Kube_System'"),
        ("kube-system/Sched!:config.yaml", "name 'Sched!'"),
        ("kube-system/sched:conf/ig", "key 'conf/ig'"),
    ],
)
def test_a_configmap_that_breaks_kubernetes_name_rules_is_refused_before_connecting(
    kube: KubeServer,
    tmp_path: Path,
    api_client: Any,
    superuser: User,
    location: str,
    part: str,
) -> None:
    """The server here is down: the name is what is wrong, and it is said first."""
    elsewhere = kube.kubeconfig_for("https://127.0.0.1:1", tmp_path / "kubeconfig")
    with pytest.raises(CommandError, match=f"{part} is not valid"):
        add("bad-name", "--kubeconfig", str(elsewhere), "--scheduler-configmap", location)
    api_client.force_login(superuser)
    body = {
        "name": "bad-name",
        "kind": "kubeconfig",
        "kubeconfig_path": str(elsewhere),
        "scheduler_configmap": location,
    }
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 400
    [message] = response.json()["scheduler_configmap"]
    assert f"{part} is not valid" in message
    assert not Cluster.objects.exists()


def test_the_api_connects_for_superusers_only(
    kube: KubeServer, api_client: Any, superuser: User, operator: User
) -> None:
    body = {"name": "api-koord", "kind": "kubeconfig", "kubeconfig_path": str(kube.kubeconfig)}
    api_client.force_login(operator)
    assert api_client.post("/api/v1/clusters/", body, format="json").status_code == 403
    api_client.force_login(superuser)
    response = api_client.post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 201, response.content
    connection = response.json()["connection"]
    assert connection == {
        "server_version": server_version(kube),
        "scheduler_configmap": "koordinator-system/koord-scheduler-config:koord-scheduler-config",
        "discovered": True,
        "missing_permissions": [],
    }
    again = api_client.post("/api/v1/clusters/", body, format="json")
    assert again.status_code == 400 and "name" in again.json()
    missing_path = {"name": "x", "kind": "kubeconfig"}
    assert api_client.post("/api/v1/clusters/", missing_path, format="json").status_code == 400


def test_the_add_cluster_page(
    client: Any,
    kube: KubeServer,
    superuser: User,
    operator: User,
    viewer: User,
    settings: Any,
    tmp_path: Path,
) -> None:
    """Operators connect with kubeconfig files under KUBECONFIG_DIR (superusers with any);
    the sync page then says what was found and what is missing."""
    client.force_login(viewer)
    assert client.get("/clusters/new/").status_code == 403
    settings.KUBECONFIG_DIR = tmp_path / "kubeconfigs"
    settings.KUBECONFIG_DIR.mkdir()
    form = {"name": "page-koord", "kind": "kubeconfig", "kubeconfig_path": str(kube.kubeconfig)}
    client.force_login(operator)
    refused = client.post("/clusters/new/", form)
    assert refused.status_code == 400
    assert "under" in refused.context["form"].errors["kubeconfig_path"][0]
    allowed = settings.KUBECONFIG_DIR / "prod.yaml"
    allowed.write_text(kube.kubeconfig.read_text())
    response = client.post("/clusters/new/", {**form, "kubeconfig_path": str(allowed)}, follow=True)
    assert response.status_code == 200
    cluster = Cluster.objects.get(name="page-koord")
    assert response.redirect_chain[-1][0] == f"/clusters/{cluster.pk}/sync/"
    shown = [str(m) for m in response.context["messages"]]
    assert any("koordinator-system/koord-scheduler-config" in m for m in shown), shown
    client.force_login(superuser)
    away = client.post("/clusters/new/", {"name": "no-sa", "kind": "in-cluster"})
    assert away.status_code == 400 and "Cannot connect" in str(away.context["form"].errors)
    assert not Cluster.objects.filter(name="no-sa").exists()
