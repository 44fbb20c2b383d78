"""Declarative pushes: compute the desired object, compare with the cluster, write the difference.

Each push has a ``plan_*`` function (the dry-run the UI shows before an operator confirms)
and an ``apply_*`` function that writes exactly the plan's changes. A plan lists
:class:`Change` objects, one per field that differs, with a unified diff; an unchanged
cluster gives an empty plan, and applying it writes nothing, so pushes are idempotent.

Every write carries the resourceVersion read when planning (an update with a precondition,
or a create), so a concurrent writer's change is never overwritten: the write fails with a
409, and the apply re-reads the object, re-plans it and writes again, keeping the other
writer's change. If that writer changed a field schedboard is writing, the apply stops
instead (:class:`~policy.clusters.gateway.errors.ConcurrentEdit`): nobody confirmed writing over it.
What schedboard writes is narrow:

- a ConfigMap key (the KubeSchedulerConfiguration): other keys are left as they are;
- one node annotation, and only on nodes schedboard owns (wrote before) or where it is absent;
  annotations set by someone else are never touched, and ownership is returned to the caller;
- inside ``slo-controller-config``'s ``colocation-config`` JSON, only the collect-policy
  fields and the ``nodeConfigs[]`` entries schedboard owns; every other key and field stays.

ConfigMaps are written with PUT (RBAC verb ``update``), nodes with a JSON merge patch (verb
``patch``), matching the least-privilege ClusterRole in ``deploy/``.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import yaml

from policy.clusters.gateway import desired as desired_state
from policy.clusters.gateway.changes import Change, OnWrite
from policy.clusters.gateway.connection import MERGE_PATCH, Connection, Json, path_segment
from policy.clusters.gateway.errors import (
    ApplyError,
    ConcurrentEdit,
    GatewayError,
    NotFoundError,
    PermanentError,
)
from policy.clusters.gateway.readback import NODES, list_objects
from policy.clusters.gateway.retry import on_conflict
from scoring import ANNOTATION_USAGE_THRESHOLDS, InputError, load_json, load_yaml

logger = logging.getLogger(__name__)

SLO_NAMESPACE = "koordinator-system"
SLO_CONFIGMAP = "slo-controller-config"
COLOCATION_KEY = "colocation-config"


# --------------------------------------------------------------------------------------------
# Changes and plans


@dataclass
class Plan:
    """What a push would change. Iterates over its changes; ``notes`` tell what was left alone
    on purpose (someone else's annotation) or deserves a warning; ``owned`` (annotations and
    node configs) is what schedboard owns once the plan is applied."""

    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    owned: frozenset[str] | None = None

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)


@dataclass
class ApplyResult:
    """What an apply wrote (each change whole) and what schedboard owns afterwards."""

    applied: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    owned: frozenset[str] | None = None


def _version(obj: Json | None) -> str | None:
    return str(obj["metadata"]["resourceVersion"]) if obj else None


# --------------------------------------------------------------------------------------------
# ConfigMap keys


def _configmap_path(namespace: str, name: str = "") -> str:
    base = f"/api/v1/namespaces/{path_segment(namespace)}/configmaps"
    return f"{base}/{path_segment(name)}" if name else base


def read_configmap(conn: Connection, namespace: str, name: str) -> Json | None:
    """The ConfigMap, or None if it does not exist."""
    try:
        return conn.request("GET", _configmap_path(namespace, name), what=f"get {namespace}/{name}")
    except NotFoundError:
        return None


def _data(configmap: Json | None) -> dict[str, str]:
    return dict((configmap or {}).get("data") or {})


Same = Callable[[str, str], bool]


def same_document(current: str, wanted: str) -> bool:
    """Two YAML/JSON texts holding the same document (comments, layout and key order aside):
    rewriting one as the other would change nothing the scheduler reads."""
    try:  # the cluster's text may be hostile: the loader's limits hold (alias bombs, depth)
        return bool(load_yaml(current) == load_yaml(wanted))
    except (yaml.YAMLError, InputError):
        return False


def _key_change(
    configmap: Json | None,
    namespace: str,
    name: str,
    key: str,
    value: str | None,
    same: Same | None = None,
) -> Change | None:
    current = _data(configmap).get(key)
    if current == value:
        return None
    if same is not None and current is not None and value is not None and same(current, value):
        return None
    return Change("ConfigMap", namespace, name, f"data[{key}]", current, value, _version(configmap))


def plan_configmap_key(
    conn: Connection,
    namespace: str,
    name: str,
    key: str,
    value: str | None,
    same: Same | None = None,
) -> Plan:
    """The change that makes ``data[key]`` equal ``value`` (None: remove the key); none when
    ``same`` says the current value already means ``value``."""
    configmap = read_configmap(conn, namespace, name)
    change = _key_change(configmap, namespace, name, key, value, same)
    return Plan([change] if change else [])


def _write_configmap_key(conn: Connection, change: Change, key: str) -> None:
    """Create the ConfigMap, or PUT it back with one key changed and the planned version as a
    precondition (409 if anything changed since; other keys are sent back as read)."""
    ref = f"{change.namespace}/{change.name}"
    if change.resource_version is None:
        body: Json = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": change.name, "namespace": change.namespace},
            "data": {key: change.after} if change.after is not None else {},
        }
        conn.request("POST", _configmap_path(change.namespace), body=body, what=f"create {ref}")
        return
    current = conn.request("GET", _configmap_path(change.namespace, change.name), what=f"get {ref}")
    current["metadata"]["resourceVersion"] = change.resource_version
    data = _data(current)
    if change.after is None:
        data.pop(key, None)
    else:
        data[key] = change.after
    current["data"] = data
    conn.request(
        "PUT", _configmap_path(change.namespace, change.name), body=current, what=f"update {ref}"
    )


def apply_configmap_key(
    conn: Connection,
    namespace: str,
    name: str,
    key: str,
    value: str | None,
    *,
    plan: Plan | None = None,
    on_write: OnWrite | None = None,
    same: Same | None = None,
) -> ApplyResult:
    """Make ``data[key]`` equal ``value``. ``plan`` (a confirmed dry-run) is written as is if
    the ConfigMap has not changed since (an empty one writes nothing); if it has, the write
    fails its precondition (409) and is re-planned from the fresh object."""

    def replan() -> Plan:
        return plan_configmap_key(conn, namespace, name, key, value, same)

    def now() -> str | None:
        return _data(read_configmap(conn, namespace, name)).get(key)

    first = plan if plan is not None else replan()
    write = lambda c: _write_configmap_key(conn, c, key)  # noqa: E731
    return _apply_single(first, replan, write, now, _whole_text, on_write)


Fields = Callable[[str | None], dict[str, Any]]


def _whole_text(text: str | None) -> dict[str, Any]:
    """A value schedboard writes whole (the scheduler configuration): one field."""
    return {"": text}


def concurrent_edit(change: Change, now: str | None, fields: Fields) -> ConcurrentEdit | None:
    """The conflict, if another client changed a field ``change`` writes since it was planned.

    ``fields`` splits a value into the fields schedboard may write; those whose value differs
    between ``before`` and ``after`` are the change's. One that now holds neither its planned
    value nor ours was written by someone else: writing on would put ours over theirs
    unconfirmed. (Holding ours is no conflict: an earlier attempt of ours may have landed.)
    Changes to the other fields are someone else's business and are kept by the re-plan.
    """
    before, after, current = fields(change.before), fields(change.after), fields(now)
    for path in sorted(set(before) | set(after)):
        planned, ours = before.get(path), after.get(path)
        if planned != ours and current.get(path) not in (planned, ours):
            where = f"{change.object_ref} {change.field}" + (f" {path}" if path else "")
            return ConcurrentEdit(where, planned, current.get(path), ours)
    return None


def _apply_single(
    plan: Plan,
    replan: Callable[[], Plan],
    write: Callable[[Change], None],
    now: Callable[[], str | None],
    fields: Fields,
    on_write: OnWrite | None = None,
) -> ApplyResult:
    """Write a one-object plan; on a conflict re-read, re-plan and write again, unless the
    conflicting writer changed a field the plan writes (:func:`concurrent_edit`).

    A re-plan that comes out empty means the cluster already holds what was being written
    (perhaps our own earlier attempt landed although its answer was lost): the attempted
    changes are then reported as applied.
    """
    state = {"plan": plan, "attempted": plan}

    def step() -> Plan:
        for change in state["plan"]:
            try:
                write(change)
            except GatewayError as exc:
                if exc.status == 409:
                    conflict = concurrent_edit(change, now(), fields)
                    if conflict is not None:
                        raise conflict from None
                    state["attempted"] = state["plan"] or state["attempted"]
                    state["plan"] = replan()
                raise
        return state["plan"]

    written = on_conflict(step, what="configmap write")
    changes = written.changes or (state["attempted"].changes if written is not plan else [])
    if on_write is not None:
        for change in changes:
            on_write(change)
    return ApplyResult(list(changes), list(written.notes), written.owned)


# --------------------------------------------------------------------------------------------
# Node annotations


# What a push does with one node's annotation (:func:`annotation_action`).
KEEP = "keep"  # it already holds the wanted value (or neither has one)
WRITE = "write"  # absent, or schedboard's own: set to the wanted value
REMOVE = "remove"  # schedboard's own, and nothing is wanted any more
LEAVE = "leave"  # someone else's: never touched


def annotation_action(current: str | None, want: str | None, owned: bool) -> tuple[str, bool]:
    """(action, owned afterwards) for a node whose annotation is ``current`` when the policies
    want ``want`` and schedboard wrote it before (``owned``): schedboard writes where the
    annotation is absent or its own, removes only its own, and leaves anyone else's alone.
    The one rule the push, the dry-run and every page's "what is in force" follow."""
    if current == want:
        return KEEP, owned if current is not None else False
    if want is not None:
        return (WRITE, True) if current is None or owned else (LEAVE, False)
    return (REMOVE, False) if owned else (LEAVE, False)


def _node_change(
    node: Json | None,
    name: str,
    want: str | None,
    owned: bool,
    annotation: str,
) -> tuple[Change | None, str | None, bool]:
    """(change, note, owned afterwards) for one node, by :func:`annotation_action`."""
    if node is None:
        note = f"node {name} no longer exists" if want is not None else None
        return None, note, False
    current = (node["metadata"].get("annotations") or {}).get(annotation)
    field_name = f"metadata.annotations[{annotation}]"
    action, owns = annotation_action(current, want, owned)
    if action == WRITE:
        return Change("Node", "", name, field_name, current, want, _version(node)), None, owns
    if action == REMOVE:
        return Change("Node", "", name, field_name, current, None, _version(node)), None, owns
    if action == LEAVE and want is not None:
        return None, f"node {name}: {annotation} was set by someone else; left alone", owns
    return None, None, owns


def _plan_nodes(
    nodes: Mapping[str, Json],
    desired: Mapping[str, str | None],
    owned: AbstractSet[str],
    annotation: str,
) -> Plan:
    plan = Plan(owned=frozenset())
    owned_after: set[str] = set()
    for name in sorted(set(desired) | set(owned)):
        change, note, owns = _node_change(
            nodes.get(name), name, desired.get(name), name in owned, annotation
        )
        if change:
            plan.changes.append(change)
        if note:
            plan.notes.append(note)
        if owns:
            owned_after.add(name)
    plan.owned = frozenset(owned_after)
    return plan


def plan_node_annotations(
    conn: Connection,
    desired: Mapping[str, str | None],
    owned: AbstractSet[str],
    *,
    annotation: str = ANNOTATION_USAGE_THRESHOLDS,
) -> Plan:
    """Changes to ``annotation`` on nodes: ``desired`` maps node names to the value (None or
    absent: no policy targets the node); ``owned`` names the nodes where schedboard wrote it."""
    nodes = {obj["metadata"]["name"]: obj for obj in list_objects(conn, NODES).items}
    return _plan_nodes(nodes, desired, owned, annotation)


def _node_path(name: str) -> str:
    return f"/api/v1/nodes/{path_segment(name)}"


def _read_node(conn: Connection, name: str) -> Json | None:
    try:
        return conn.request("GET", _node_path(name), what=f"get node {name}")
    except NotFoundError:
        return None


def _patch_annotation(conn: Connection, change: Change, annotation: str) -> None:
    """A merge patch of the one annotation, with the planned resourceVersion: 409 if the node
    changed since it was read."""
    body = {
        "metadata": {
            "resourceVersion": change.resource_version,
            "annotations": {annotation: change.after},  # null removes it
        }
    }
    conn.request(
        "PATCH",
        _node_path(change.name),
        body=body,
        content_type=MERGE_PATCH,
        what=f"patch node {change.name}",
    )


def apply_node_annotations(
    conn: Connection,
    desired: Mapping[str, str | None],
    owned: AbstractSet[str],
    *,
    annotation: str = ANNOTATION_USAGE_THRESHOLDS,
    plan: Plan | None = None,
    on_write: OnWrite | None = None,
) -> ApplyResult:
    """Write ``plan`` (or a fresh one) node by node; a node that changed meanwhile is re-read
    and re-planned. Raises :class:`ApplyError` with what was written if a write fails.
    ``on_write`` hears of each write as soon as it landed (a job records it there and then)."""
    if plan is None:
        plan = plan_node_annotations(conn, desired, owned, annotation=annotation)
    touched = {change.name for change in plan.changes}
    owned_now = set((plan.owned or frozenset()) - touched)
    result = ApplyResult(notes=list(plan.notes))
    for index, change in enumerate(plan.changes):
        try:
            written, owns = _apply_node(conn, change, desired, owned, annotation)
        except GatewayError as exc:
            # Nodes not written yet keep the ownership they had.
            pending = {later.name for later in plan.changes[index:] if later.name in owned}
            raise ApplyError(exc, result.applied, frozenset(owned_now | pending)) from None
        if written:
            result.applied.append(written)
            if on_write is not None:
                on_write(written)
        if owns:
            owned_now.add(change.name)
    result.owned = frozenset(owned_now)
    return result


def _apply_node(
    conn: Connection,
    change: Change,
    desired: Mapping[str, str | None],
    owned: AbstractSet[str],
    annotation: str,
) -> tuple[Change | None, bool]:
    """Write one node's change, re-planning it from a fresh read on each conflict.

    Returns the change in effect (None if nothing was written) and whether schedboard owns
    the node's annotation afterwards.
    """
    state: dict[str, Any] = {"change": change, "result": None}

    def step() -> tuple[Change | None, bool]:
        current: Change | None = state["change"]
        if current is None:
            return state["result"] or (None, False)
        try:
            _patch_annotation(conn, current, annotation)
        except NotFoundError:
            return None, False  # the node went away meanwhile: nothing left to write
        except GatewayError as exc:
            if exc.status == 409:
                _replan_node(conn, current, desired, owned, annotation, state)
            raise
        return current, current.after is not None

    return on_conflict(step, what=f"node {change.name}")


def _replan_node(
    conn: Connection,
    attempted: Change,
    desired: Mapping[str, str | None],
    owned: AbstractSet[str],
    annotation: str,
    state: dict[str, Any],
) -> None:
    """After a conflict: the node's fresh change, or, if none is needed, the final outcome
    (the attempted change if the node now holds exactly its value). :class:`ConcurrentEdit`
    when someone else changed the annotation itself meanwhile."""
    name = attempted.name
    node = _read_node(conn, name)
    if node is not None:
        now = (node["metadata"].get("annotations") or {}).get(annotation)
        conflict = concurrent_edit(attempted, now, _whole_text)
        if conflict is not None:
            raise conflict
    fresh, _, owns = _node_change(node, name, desired.get(name), name in owned, annotation)
    state["change"] = fresh
    if fresh is None:
        current = (node or {}).get("metadata", {}).get("annotations", {}) or {}
        landed = node is not None and current.get(annotation) == attempted.after
        state["result"] = (attempted, attempted.after is not None) if landed else (None, owns)


# --------------------------------------------------------------------------------------------
# slo-controller-config: NodeMetric collect policies


def _parse_colocation(text: str | None) -> dict[str, Any]:
    if not text or not text.strip():
        return {}
    try:
        value = load_json(text, source=COLOCATION_KEY)
    except ValueError as exc:  # InputLimitError is one too
        raise PermanentError(
            f"{COLOCATION_KEY} is not valid JSON ({exc}); schedboard will not overwrite it"
        ) from None
    if not isinstance(value, dict):
        raise PermanentError(
            f"{COLOCATION_KEY} is not a JSON object; schedboard will not overwrite it"
        )
    return value


def merge_colocation(
    text: str | None,
    cluster: Mapping[str, int | None],
    node_configs: Sequence[Mapping[str, Any]],
    owned: AbstractSet[str],
) -> tuple[str | None, list[str], frozenset[str]]:
    """Merge schedboard's collect policy into a ``colocation-config`` JSON text.

    Returns (new text or None when unchanged, notes, node-config names owned afterwards).
    Only the cluster-wide collect fields in ``cluster`` (None removes one) and the managed
    fields of the ``nodeConfigs[]`` entries schedboard owns change; every other key, field
    and entry is kept, in place.
    """
    for key in cluster:
        if key not in desired_state.COLLECT_FIELDS:
            raise ValueError(f"{key!r} is not a collect-policy field schedboard manages")
    config = _parse_colocation(text)
    merged = copy.deepcopy(config)
    for key, value in cluster.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    entries, notes, owned_after = _merge_node_configs(
        config.get("nodeConfigs"), node_configs, owned
    )
    if entries or "nodeConfigs" in config:
        merged["nodeConfigs"] = entries
    if (cluster or node_configs) and merged.get("enable") is not True:
        notes.append(
            f'{COLOCATION_KEY} has no "enable": true; Koordinator ignores the collect policy '
            "(NodeMetrics keep reporting every 60 s over 300 s) until colocation is enabled"
        )
    if merged == config:
        return None, notes, owned_after
    return json.dumps(merged, indent=2) + "\n", notes, owned_after


_NODE_CONFIG_FIELDS = ("nodeSelector", *desired_state.COLLECT_FIELDS)


def written_colocation_fields(
    cluster: Mapping[str, int | None],
    node_configs: Sequence[Mapping[str, Any]],
    owned_configs: AbstractSet[str],
) -> dict[str, Any]:
    """The :func:`colocation_fields` a push that succeeded left as schedboard wrote them: the
    cluster-wide fields it set, and every managed field of the nodeConfigs entries it owns."""
    fields: dict[str, Any] = {key: value for key, value in cluster.items() if value is not None}
    for entry in node_configs:
        name = str(entry["name"])
        if name in owned_configs:
            for key in _NODE_CONFIG_FIELDS:
                fields[f"nodeConfigs[{name}].{key}"] = entry.get(key)
    return fields


def colocation_fields(text: str | None) -> dict[str, Any]:
    """The fields of a ``colocation-config`` a collect policy may write: the cluster-wide
    collect fields and each named ``nodeConfigs`` entry's (the whole text if it is unreadable)."""
    try:
        config = _parse_colocation(text)
    except PermanentError:
        return _whole_text(text)
    fields: dict[str, Any] = {key: config.get(key) for key in desired_state.COLLECT_FIELDS}
    entries = config.get("nodeConfigs")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            for key in _NODE_CONFIG_FIELDS:
                fields[f"nodeConfigs[{entry['name']}].{key}"] = entry.get(key)
    return fields


def _merge_node_configs(
    existing: Any,
    wanted: Sequence[Mapping[str, Any]],
    owned: AbstractSet[str],
) -> tuple[list[Any], list[str], frozenset[str]]:
    if existing is not None and not isinstance(existing, list):
        raise PermanentError(
            "colocation-config nodeConfigs is not a list; schedboard will not overwrite it"
        )
    by_name = {str(entry["name"]): entry for entry in wanted}
    if len(by_name) != len(wanted):
        raise ValueError("node config names must be unique")
    notes: list[str] = []
    owned_after: set[str] = set()
    result: list[Any] = []
    for entry in existing or []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name in by_name and name not in owned:
            notes.append(f"nodeConfigs entry {name!r} was written by someone else; left alone")
            result.append(entry)
            by_name.pop(name)
        elif name in by_name:
            result.append(_with_fields(entry, by_name.pop(name)))
            owned_after.add(name)
        elif name in owned:
            remainder = _with_fields(entry, {})
            if set(remainder) - {"name"}:
                result.append(remainder)  # someone added fields of their own: keep those
        else:
            result.append(entry)
    for name, entry in by_name.items():
        result.append(_with_fields({"name": name}, entry))
        owned_after.add(name)
    return result, notes, frozenset(owned_after)


def _with_fields(entry: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """``entry`` with schedboard's fields set as in ``wanted`` (absent there: removed)."""
    result = dict(entry)
    for key in _NODE_CONFIG_FIELDS:
        if wanted.get(key) is not None:
            result[key] = wanted[key]
        else:
            result.pop(key, None)
    return result


@dataclass(frozen=True)
class SloTarget:
    """Where Koordinator's slo-controller reads its configuration (its flags can move it)."""

    namespace: str = SLO_NAMESPACE
    name: str = SLO_CONFIGMAP
    key: str = COLOCATION_KEY


def _plan_slo_from(
    configmap: Json | None,
    cluster: Mapping[str, int | None],
    node_configs: Sequence[Mapping[str, Any]],
    owned: AbstractSet[str],
    target: SloTarget,
) -> Plan:
    current = _data(configmap).get(target.key)
    after, notes, owned_after = merge_colocation(current, cluster, node_configs, owned)
    plan = Plan(notes=notes, owned=owned_after)
    if after is not None:
        plan.changes.append(
            Change(
                "ConfigMap",
                target.namespace,
                target.name,
                f"data[{target.key}]",
                current,
                after,
                _version(configmap),
            )
        )
    return plan


def plan_slo_colocation(
    conn: Connection,
    cluster: Mapping[str, int | None],
    node_configs: Sequence[Mapping[str, Any]] = (),
    owned: AbstractSet[str] = frozenset(),
    *,
    target: SloTarget = SloTarget(),
) -> Plan:
    """The change to ``colocation-config`` for the collect policy: ``cluster`` from
    :func:`~policy.clusters.gateway.desired.collect_policy`, ``node_configs`` the
    ``nodeConfigs[]`` entries of the collect policies
    (:func:`~policy.policies.rendering.colocation_config`), ``owned`` the entry names
    schedboard wrote before."""
    configmap = read_configmap(conn, target.namespace, target.name)
    return _plan_slo_from(configmap, cluster, node_configs, owned, target)


def apply_slo_colocation(
    conn: Connection,
    cluster: Mapping[str, int | None],
    node_configs: Sequence[Mapping[str, Any]] = (),
    owned: AbstractSet[str] = frozenset(),
    *,
    target: SloTarget = SloTarget(),
    plan: Plan | None = None,
    on_write: OnWrite | None = None,
) -> ApplyResult:
    """Write the collect policy; on a conflict the JSON is merged again over the fresh value,
    so a concurrent writer's keys and fields survive."""

    def replan() -> Plan:
        return plan_slo_colocation(conn, cluster, node_configs, owned, target=target)

    def now() -> str | None:
        return _data(read_configmap(conn, target.namespace, target.name)).get(target.key)

    first = plan if plan is not None else replan()
    write = lambda c: _write_configmap_key(conn, c, target.key)  # noqa: E731
    result = _apply_single(first, replan, write, now, colocation_fields, on_write)
    if result.owned is None:
        result.owned = frozenset(owned)
    return result
