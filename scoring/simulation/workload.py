"""A workload file as the pods its controllers would create, named as they would name them.

- ``Pod``: kept as is.
- ``Deployment``: its ReplicaSet ``<deployment>-<pod-template-hash>``, then ``replicas`` pods
  ``<replicaset>-<5 random chars>`` labelled ``pod-template-hash``
  (pkg/controller/deployment/sync.go ``getNewReplicaSet``; pkg/controller/controller_utils.go
  ``ComputeHash``).
- ``ReplicaSet``: ``replicas`` pods ``<replicaset>-<5 random chars>``
  (pkg/controller/controller_utils.go ``getPodsPrefix`` with ``GenerateName``).
- ``StatefulSet``: pods ``<set>-<ordinal>`` from ``spec.ordinals.start``, with ``hostname``,
  ``subdomain`` and the ``controller-revision-hash`` / ``statefulset.kubernetes.io/pod-name`` /
  ``apps.kubernetes.io/pod-index`` labels (pkg/controller/statefulset/stateful_set_utils.go).
- ``Job``: ``min(parallelism, completions)`` pods ``<job>-<5 random chars>`` (Indexed jobs
  ``<job>-<index>-<5 random chars>`` with the completion-index annotation and label), labelled
  with the job name and uid (pkg/controller/job/job_controller.go, indexed_job_utils.go).

Each pod's controller is its ownerReference with ``controller: true``. Random suffixes use
Kubernetes' alphabet (apimachinery pkg/util/rand ``String``, names truncated to 58 characters
before the suffix as ``SimpleNameGenerator`` does) and, like missing uids, come from a generator
seeded with ``seed``: the same file and seed give the same pods. The template hash has the real
form (``SafeEncodeString`` of a 32-bit FNV-1a) but hashes the template's canonical JSON, not Go's
``spew`` dump of the struct, so its value differs from the one a cluster would show.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from scoring.errors import InputError

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery pkg/util/rand
MAX_GENERATED_NAME_LENGTH = 63 - 5  # apiserver names.MaxGeneratedNameLength
TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_HASH_LABEL = "controller-revision-hash"
STS_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
STS_POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
JOB_INDEX_KEY = "batch.kubernetes.io/job-completion-index"

Obj = dict[str, Any]
Warn = Callable[[str], None]


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: each character mapped into the safe alphabet."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """A ``ComputeHash``-shaped hash of a pod template (see the module docstring)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    return safe_encode(str(fnv32a(data)))


class _Namer:
    """Random pod-name suffixes and uids, unique per namespace, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._taken: set[tuple[str, str]] = set()

    def uid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def generate(self, namespace: str, prefix: str) -> str:
        """``GenerateName``: the prefix cut to 58 characters plus 5 random ones (redrawn on a
        clash, as the controller retries on AlreadyExists)."""
        while True:
            suffix = "".join(self._rng.choice(ALPHANUMS) for _ in range(5))
            name = prefix[:MAX_GENERATED_NAME_LENGTH] + suffix
            if (namespace, name) not in self._taken:
                return self.claim(namespace, name)

    def claim(self, namespace: str, name: str) -> str:
        self._taken.add((namespace, name))
        return name


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return f"{obj.get('kind')} {meta.get('namespace') or 'default'}/{meta.get('name', '<unnamed>')}"


def _field(obj: Mapping[str, Any], path: str, kind: type, default: Any) -> Any:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if value is None:
        return default
    if not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
        raise InputError(f"{_describe(obj)}: {path}: expected {kind.__name__}, got {value!r}")
    return value


def _count(obj: Mapping[str, Any], path: str, default: int) -> int:
    value: int = _field(obj, path, int, default)
    if value < 0:
        raise InputError(f"{_describe(obj)}: {path}: must be >= 0, got {value}")
    return value


class _Controller:
    """One controller object: its identity and pod template."""

    def __init__(self, obj: Mapping[str, Any], namer: _Namer) -> None:
        meta = _field(obj, "metadata", Mapping, {})
        if not meta.get("name"):
            raise InputError(f"{_describe(obj)}: metadata.name: required")
        self.obj = obj
        self.kind = str(obj.get("kind"))
        self.api_version = str(obj.get("apiVersion") or "")
        self.name = str(meta["name"])
        self.namespace = str(meta.get("namespace") or "default")
        self.uid = str(meta.get("uid") or namer.uid())
        template = _field(obj, "spec.template", Mapping, None)
        if template is None or not isinstance(template.get("spec"), Mapping):
            raise InputError(f"{_describe(obj)}: spec.template.spec: required")
        self.template: Mapping[str, Any] = template

    def owner(self, kind: str, name: str, uid: str, api_version: str = "apps/v1") -> Obj:
        return {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def pod(
        self,
        name: str,
        uid: str,
        owner: Obj,
        *,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        spec: Mapping[str, Any] | None = None,
        generate_name: str | None = None,
    ) -> Obj:
        meta_in = self.template.get("metadata") or {}
        metadata: Obj = {
            "name": name,
            "namespace": self.namespace,
            "uid": uid,
            "labels": {**(meta_in.get("labels") or {}), **(labels or {})},
            "annotations": {**(meta_in.get("annotations") or {}), **(annotations or {})},
            "ownerReferences": [owner],
        }
        if generate_name is not None:
            metadata["generateName"] = generate_name
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": spec if spec is not None else self.template["spec"],
            "status": {"phase": "Pending"},
        }


def _replica_set_pods(
    c: _Controller, namer: _Namer, rs_name: str, rs_uid: str, count: int, hash_label: str | None
) -> Iterator[Obj]:
    owner = c.owner("ReplicaSet", rs_name, rs_uid)
    labels = {TEMPLATE_HASH_LABEL: hash_label} if hash_label else {}
    prefix = f"{rs_name}-"
    for _ in range(count):
        name = namer.generate(c.namespace, prefix)
        yield c.pod(name, namer.uid(), owner, labels=labels, generate_name=prefix)


def _deployment(obj: Mapping[str, Any], namer: _Namer) -> Iterator[Obj]:
    c = _Controller(obj, namer)
    collisions = _field(obj, "status.collisionCount", int, None)
    digest = template_hash(c.template, collisions)
    rs_name = f"{c.name}-{digest}"
    yield from _replica_set_pods(
        c, namer, rs_name, namer.uid(), _count(obj, "spec.replicas", 1), digest
    )


def _replica_set(obj: Mapping[str, Any], namer: _Namer) -> Iterator[Obj]:
    c = _Controller(obj, namer)
    yield from _replica_set_pods(c, namer, c.name, c.uid, _count(obj, "spec.replicas", 1), None)


def _stateful_set(obj: Mapping[str, Any], namer: _Namer) -> Iterator[Obj]:
    c = _Controller(obj, namer)
    owner = c.owner("StatefulSet", c.name, c.uid)
    revision = f"{c.name}-{template_hash(c.template)}"
    service = _field(obj, "spec.serviceName", str, "")
    start = _count(obj, "spec.ordinals.start", 0)
    for ordinal in range(start, start + _count(obj, "spec.replicas", 1)):
        name = namer.claim(c.namespace, f"{c.name}-{ordinal}")
        spec = {**c.template["spec"], "hostname": name}
        if service:
            spec["subdomain"] = service
        labels = {
            REVISION_HASH_LABEL: revision,
            STS_POD_NAME_LABEL: name,
            STS_POD_INDEX_LABEL: str(ordinal),
        }
        yield c.pod(name, namer.uid(), owner, labels=labels, spec=spec)


def _job(obj: Mapping[str, Any], namer: _Namer) -> Iterator[Obj]:
    c = _Controller(obj, namer)
    owner = c.owner("Job", c.name, c.uid, "batch/v1")
    parallelism = _count(obj, "spec.parallelism", 1)
    completions = _field(obj, "spec.completions", int, None)
    count = parallelism if completions is None else min(parallelism, max(completions, 0))
    labels = {
        "batch.kubernetes.io/controller-uid": c.uid,
        "batch.kubernetes.io/job-name": c.name,
        "controller-uid": c.uid,
        "job-name": c.name,
    }
    indexed = _field(obj, "spec.completionMode", str, "NonIndexed") == "Indexed"
    for index in range(count):
        prefix = f"{c.name}-"
        extra: dict[str, str] = {}
        if indexed:
            tail = f"-{index}-"
            prefix = f"{c.name}{tail}"
            if len(prefix) > MAX_GENERATED_NAME_LENGTH:
                prefix = prefix[: MAX_GENERATED_NAME_LENGTH - len(tail)] + tail
            extra = {JOB_INDEX_KEY: str(index)}
        name = namer.generate(c.namespace, prefix)
        yield c.pod(
            name,
            namer.uid(),
            owner,
            labels={**labels, **extra},
            annotations=extra,
            generate_name=prefix,
        )


_EXPANDERS: dict[tuple[str, str], Callable[[Mapping[str, Any], _Namer], Iterator[Obj]]] = {
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replica_set,
    ("apps", "StatefulSet"): _stateful_set,
    ("batch", "Job"): _job,
}


class TooManyPods(InputError):
    """The workload expands to more pods than allowed (found before they are all made)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the workload has more than {limit} pods")


def expand_workload(
    objects: Iterable[Mapping[str, Any]],
    *,
    seed: int = 0,
    warn: Warn | None = None,
    limit: int | None = None,
) -> list[Mapping[str, Any]]:
    """Pod manifests for ``objects``, in order; other kinds are skipped with a warning.

    ``limit`` stops with :class:`TooManyPods` as soon as one pod more would be made, so a
    ``replicas: 1000000000`` costs nothing.
    """
    namer = _Namer(seed)
    pods: list[Mapping[str, Any]] = []

    def add(items: Iterable[Mapping[str, Any]]) -> None:
        for pod in items:
            if limit is not None and len(pods) >= limit:
                raise TooManyPods(limit)
            pods.append(pod)

    for obj in objects:
        api_version = str(obj.get("apiVersion") or "")
        group = api_version.split("/")[0] if "/" in api_version else ""
        kind = str(obj.get("kind") or "")
        expander = _EXPANDERS.get((group, kind))
        if (group, kind) == ("", "Pod"):
            meta = obj.get("metadata")
            if isinstance(meta, Mapping) and meta.get("name"):
                namer.claim(str(meta.get("namespace") or "default"), str(meta["name"]))
            add([obj])
        elif expander is not None:
            add(expander(obj, namer))
        elif warn is not None:
            warn(f"warning: ignoring {api_version} {_describe(obj)}: kind not read")
    return pods


def workload_pod(obj: Mapping[str, Any], *, seed: int = 0) -> Mapping[str, Any] | None:
    """The first pod the controller of ``obj`` (a Deployment, ReplicaSet, StatefulSet or Job)
    makes, as :func:`expand_workload` makes it; None when it makes none (``replicas: 0``).
    Only that pod is made, whatever the replica count. KeyError for a kind not read."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.split("/")[0] if "/" in api_version else ""
    expander = _EXPANDERS[(group, str(obj.get("kind") or ""))]
    return next(iter(expander(obj, _Namer(seed))), None)


def workload_controllers(objects: Iterable[Mapping[str, Any]]) -> list[Obj]:
    """The ReplicaSets and StatefulSets a cluster would hold for the workload's pods.

    PodTopologySpread's system default constraints take the selector of a pod's controller
    (``helper.DefaultSelector``), so a simulation registers these with the snapshot. A Deployment
    yields its ReplicaSet (``getNewReplicaSet``: the Deployment's selector plus
    ``pod-template-hash``, pkg/controller/deployment/sync.go); ReplicaSets and StatefulSets are
    kept as given. Names match :func:`expand_workload`'s owner references.
    """
    out: list[Obj] = []
    for obj in objects:
        api_version = str(obj.get("apiVersion") or "")
        kind = str(obj.get("kind") or "")
        if api_version != "apps/v1" or kind not in ("Deployment", "ReplicaSet", "StatefulSet"):
            continue
        if kind != "Deployment":
            out.append(dict(obj))
            continue
        c = _Controller(obj, _Namer(0))
        digest = template_hash(c.template, _field(obj, "status.collisionCount", int, None))
        selector = json.loads(json.dumps(_field(obj, "spec.selector", Mapping, None) or {}))
        if not selector:
            labels = (c.template.get("metadata") or {}).get("labels") or {}
            selector = {"matchLabels": dict(labels)}
        selector.setdefault("matchLabels", {})[TEMPLATE_HASH_LABEL] = digest
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": f"{c.name}-{digest}", "namespace": c.namespace},
                "spec": {"selector": selector},
            }
        )
    return out
