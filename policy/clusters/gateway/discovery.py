"""What a newly connected cluster holds and allows: where its scheduler's configuration lives,
and whether schedboard's identity may do each thing a refresh and a push do.

The scheduler ConfigMap is looked for in the places the common installations put it, in
this order (the first that exists with its key wins):

- Koordinator's Helm chart: ``koordinator-system/koord-scheduler-config``, key
  ``koord-scheduler-config``;
- the scheduler-plugins ``as-a-second-scheduler`` chart: ``scheduler-plugins/scheduler-config``,
  key ``scheduler-config.yaml``;
- a hand-made kube-scheduler setup: ``kube-system/kube-scheduler-config``, key ``config.yaml``.

Permissions are asked with SelfSubjectAccessReviews, which every authenticated identity may
create, so a missing verb is named before the first refresh or push fails on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import quote

from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.errors import PermanentError
from policy.clusters.gateway.readback import SNAPSHOT_KINDS

READ = ("list", "watch")  # a refresh lists each kind once per worker, then watches it


@dataclass(frozen=True)
class ConfigMapKey:
    namespace: str
    name: str
    key: str
    source: str = ""  # which installation puts it there

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}:{self.key}"

    @classmethod
    def parse(cls, text: str, default_key: str) -> ConfigMapKey:
        """``NAMESPACE/NAME[:KEY]`` (``default_key`` when the key is left out; "" leaves it to
        :func:`scheduler_key`); ValueError naming the expected form otherwise."""
        where, _, key = text.partition(":")
        namespace, _, name = where.partition("/")
        if not namespace or not name or "/" in name:
            raise ValueError(f"{text!r}: expected NAMESPACE/NAME[:KEY]")
        return cls(namespace, name, key or default_key)


SCHEDULER_CONFIGMAP_PLACES = (
    ConfigMapKey(
        "koordinator-system",
        "koord-scheduler-config",
        "koord-scheduler-config",
        "Koordinator's Helm chart",
    ),
    ConfigMapKey(
        "scheduler-plugins",
        "scheduler-config",
        "scheduler-config.yaml",
        "scheduler-plugins' as-a-second-scheduler chart",
    ),
    ConfigMapKey("kube-system", "kube-scheduler-config", "config.yaml", "kube-scheduler"),
)


class KeyUnknown(ValueError):
    """Which key of a named ConfigMap holds the scheduler's configuration cannot be told."""


def scheduler_key(conn: Connection, place: ConfigMapKey) -> ConfigMapKey:
    """``place`` with its key: the one given; else the key a known installation puts at that
    ConfigMap; else the ConfigMap's only key. :class:`KeyUnknown` (naming the keys there)
    when it has several or none, or cannot be read: guessing would adopt nothing and say
    nothing."""
    if place.key:
        return place
    for known in SCHEDULER_CONFIGMAP_PLACES:
        if (known.namespace, known.name) == (place.namespace, place.name):
            return known
    where = f"{place.namespace}/{place.name}"
    path = f"/api/v1/namespaces/{quote(place.namespace)}/configmaps/{quote(place.name)}"
    try:
        configmap = conn.request("GET", path, what=f"get {where}")
    except PermanentError as exc:
        raise KeyUnknown(f"{where}: cannot read it ({exc}); name the key: {where}:KEY") from None
    keys = sorted(configmap.get("data") or {})
    if len(keys) == 1:
        return replace(place, key=keys[0])
    held = f"holds the keys {', '.join(keys)}" if keys else "holds no data"
    raise KeyUnknown(f"{where} {held}; name the scheduler's: {where}:KEY")


def find_scheduler_configmap(
    conn: Connection, places: tuple[ConfigMapKey, ...] = SCHEDULER_CONFIGMAP_PLACES
) -> ConfigMapKey | None:
    """The first of ``places`` whose ConfigMap exists and has the key (one this identity may
    not read counts as absent: it could not be pushed to either)."""
    for place in places:
        path = f"/api/v1/namespaces/{place.namespace}/configmaps/{place.name}"
        try:
            configmap = conn.request("GET", path, what=f"get {place.namespace}/{place.name}")
        except PermanentError:  # 404, or 403 under least-privilege RBAC
            continue
        if place.key in (configmap.get("data") or {}):
            return place
    return None


@dataclass(frozen=True)
class Access:
    """One thing the gateway does: a verb on a resource (in a namespace, by name)."""

    verb: str
    resource: str
    group: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        kind = f"{self.resource}.{self.group}" if self.group else self.resource
        what = f"{self.namespace}/{self.name}" if self.name else (self.namespace or "")
        return f"{self.verb} {kind}" + (f" {what}" if what else "")


def needed_access(
    scheduler: ConfigMapKey, slo: ConfigMapKey, descheduler: ConfigMapKey | None = None
) -> list[Access]:
    """What a refresh and a push do (deploy/rbac.yaml grants exactly this)."""
    read = [Access(verb, kind.resource, kind.group) for kind in SNAPSHOT_KINDS for verb in READ]
    return [
        *read,
        Access("get", "nodes"),
        Access("patch", "nodes"),
        *(
            Access(verb, "configmaps", "", place.namespace, place.name)
            for place in (scheduler, slo)
            for verb in ("get", "update")
        ),
        *(
            Access(verb, "configmaps", "", descheduler.namespace, descheduler.name)
            for verb in (("get", "update") if descheduler is not None else ())
            if descheduler is not None
        ),
    ]


def missing_access(conn: Connection, needed: list[Access]) -> list[Access]:
    """The accesses this identity is not allowed (asked one SelfSubjectAccessReview each)."""
    missing = []
    for access in needed:
        attributes = {"verb": access.verb, "resource": access.resource, "group": access.group}
        if access.namespace:
            attributes["namespace"] = access.namespace
        if access.name:
            attributes["name"] = access.name
        review = conn.request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body={
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attributes},
            },
            what=f"may I {access}?",
        )
        if not (review.get("status") or {}).get("allowed"):
            missing.append(access)
    return missing


def scheduler_image(conn: Connection, namespace: str, configmap: str) -> str | None:
    """The image of the Deployment in ``namespace`` that mounts the scheduler's ConfigMap (the
    scheduler itself, as Koordinator's, scheduler-plugins' and kubeadm-style installations
    run it); None when there is none, or when this identity may not list Deployments there."""
    path = f"/apis/apps/v1/namespaces/{quote(namespace, safe='')}/deployments"
    try:
        listed = conn.request("GET", path, what=f"list deployments in {namespace}")
    except PermanentError:  # 403 without the RBAC rule, 404 for a missing namespace
        return None
    for deployment in listed.get("items") or []:
        pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
        mounted = {(v.get("configMap") or {}).get("name") for v in pod.get("volumes") or []}
        containers = pod.get("containers") or []
        if configmap in mounted and containers:
            image = containers[0].get("image")
            return str(image) if image else None
    return None
