"""Connecting a cluster in one step: reach its API server, find its scheduler's ConfigMap,
check schedboard's permissions, and store it (``manage.py add_cluster``, ``POST
/api/v1/clusters/``).

Nothing is written to the cluster: the first refresh reads it, the first push is an operator's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError

from policy.accounts.changes import ChangeContext
from policy.clusters.gateway.connection import Connection, ConnectionSpec, Timeouts, connect
from policy.clusters.gateway.discovery import (
    SCHEDULER_CONFIGMAP_PLACES,
    Access,
    ConfigMapKey,
    KeyUnknown,
    find_scheduler_configmap,
    missing_access,
    needed_access,
    scheduler_key,
)
from policy.clusters.gateway.retry import RetryPolicy
from policy.clusters.models import Cluster
from policy.core.choices import ClusterKind
from policy.core.validators import (
    configmap_key_validator,
    dns1123_label_validator,
    dns1123_subdomain_validator,
)
from policy.policies.services import ClusterService, LocatedError, PolicyInvalid
from scoring import INVALID

SLO_CONFIGMAP = ConfigMapKey("koordinator-system", "slo-controller-config", "colocation-config")
DESCHEDULER_CONFIGMAP = ConfigMapKey(
    "koordinator-system", "koord-descheduler-config", "koord-descheduler-config"
)

# Connecting runs while a person (a web worker) waits: every request of the check together
# ends within CHECK_SECONDS, well inside the web server's worker timeout, and a hanging API
# server is an error saying so, not a worker killed.
CHECK_SECONDS = 8.0
CHECK_TIMEOUTS = Timeouts(connect=3.0, read=5.0, total=CHECK_SECONDS)
CHECK_RETRIES = RetryPolicy(attempts=2, base_delay=0.25, max_delay=1.0, deadline=CHECK_SECONDS)


def parse_configmap(text: str, default_key: str = "") -> ConfigMapKey:
    """``NAMESPACE/NAME[:KEY]``, each part checked against Kubernetes' rules before any cluster
    is asked: ValueError naming the part and the rule. Without ``default_key``, a key left out
    stays "" (connecting finds it: :func:`scheduler_key`)."""
    location = ConfigMapKey.parse(text, default_key)
    checks = (
        ("namespace", location.namespace, dns1123_label_validator),
        ("name", location.name, dns1123_subdomain_validator),
        ("key", location.key, configmap_key_validator),
    )
    for part, value, check in checks:
        if part == "key" and not value:
            continue
        try:
            check(value)
        except ValidationError as exc:
            rule = "; ".join(exc.messages)
            raise ValueError(f"{text!r}: {part} {value!r} is not valid: {rule}") from None
    return location


@dataclass
class Connected:
    """The stored cluster and what connecting found out."""

    cluster: Cluster
    server_version: str
    scheduler_configmap: ConfigMapKey
    discovered: bool  # found in a usual place (vs given, or the default when none was found)
    missing: list[Access] = field(default_factory=list)

    def report(self) -> list[str]:
        """What a person should read, one line each."""
        where = self.scheduler_configmap
        if self.discovered:
            found = f"found the scheduler configuration at {where} ({where.source})"
        else:
            found = f"scheduler configuration at {where}"
        lines = [f"connected to Kubernetes {self.server_version}; {found}"]
        lines += [f"missing permission: {access}" for access in self.missing]
        if self.missing:
            lines.append("apply deploy/rbac.yaml (adjusted to these names) before pushing")
        return lines


def add_cluster(
    name: str,
    *,
    kind: str,
    ctx: ChangeContext,
    kubeconfig_path: str = "",
    context: str = "",
    scheduler_configmap: ConfigMapKey | None = None,
    slo_configmap: ConfigMapKey = SLO_CONFIGMAP,
    descheduler_configmap: ConfigMapKey | None = None,
) -> Connected:
    """Connect, discover, check, then store the cluster (with its history entry).

    Raises the gateway's errors when the API server cannot be reached, and
    ``PolicyInvalid`` when the fields are not valid (a taken name, say).
    """
    if kind not in (ClusterKind.KUBECONFIG, ClusterKind.IN_CLUSTER):
        raise ValueError(f"kind must be {ClusterKind.KUBECONFIG} or {ClusterKind.IN_CLUSTER}")
    spec = ConnectionSpec(
        kind,  # type: ignore[arg-type]
        kubeconfig_path,
        context,
        credential_plugins=settings.KUBECONFIG_CREDENTIAL_PLUGINS,
    )
    with connect(spec, retry_policy=CHECK_RETRIES, timeouts=CHECK_TIMEOUTS) as conn:
        version = str(conn.version().get("gitVersion", "?"))
        if scheduler_configmap is not None:
            scheduler_configmap = _with_key(conn, scheduler_configmap)
        found = None if scheduler_configmap else find_scheduler_configmap(conn)
        place = scheduler_configmap or found or SCHEDULER_CONFIGMAP_PLACES[0]
        descheduler = descheduler_configmap or DESCHEDULER_CONFIGMAP
        missing = missing_access(conn, needed_access(place, slo_configmap, descheduler))
    cluster = ClusterService().create(
        {
            "name": name,
            "kind": kind,
            "kubeconfig_path": kubeconfig_path,
            "kubeconfig_context": context,
            "scheduler_config_namespace": place.namespace,
            "scheduler_config_name": place.name,
            "scheduler_config_key": place.key,
            "slo_config_namespace": slo_configmap.namespace,
            "slo_config_name": slo_configmap.name,
            "descheduler_config_namespace": descheduler.namespace,
            "descheduler_config_name": descheduler.name,
            "descheduler_config_key": descheduler.key,
        },
        ctx,
    )
    return Connected(cluster, version, place, found is not None, missing)


def _with_key(conn: Connection, place: ConfigMapKey) -> ConfigMapKey:
    """The scheduler ConfigMap named without a key, with its key (:func:`scheduler_key`);
    ``PolicyInvalid`` on the field when it cannot be told."""
    try:
        return scheduler_key(conn, place)
    except KeyUnknown as exc:
        field = "scheduler_configmap"
        raise PolicyInvalid(
            [LocatedError("cluster", None, field, field, INVALID, str(exc))]
        ) from None
