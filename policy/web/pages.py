"""What the pages share: picking the cluster, the LoadAware args in force, what the engine tier
answers about a snapshot (the dashboard's per-node load, a node in detail, the pending pods),
and a small per-process cache of the dashboard's per-node rows.

Web processes hold no engine snapshot: the views of a snapshot are prepared where the
cluster's engine state is held (``prepare_views``, run by the engine worker once a snapshot is
stored, or when a page asks for views not prepared yet) and read from the database."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from policy.clusters.engine import document_digest, engine_for, snapshot_for, snapshot_key
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.caching import BuildCache
from policy.core.choices import ClusterKind
from policy.core.params import parse_id
from policy.decisions import evaluation
from policy.engine import client
from policy.engine.questions import Refused
from policy.policies import rendering
from policy.web import prepared, trends
from policy.web.presenters.loadaware import PLUGIN, ClusterLoad, cluster_load, default_plugin
from policy.web.presenters.node import NodeDetail, node_detail_from_json
from scoring import ConfigurationInvalid, InputError, LoadAwareScheduling, Snapshot, gc_paused

_loads = BuildCache(size=8)
MAX_PENDING_CHOICES = 500  # the evaluate form's pending pods


def clear_caches() -> None:
    _loads.clear()


SESSION_CLUSTER = "schedboard.cluster"
# The cluster last chosen, kept past logging out (``policy.middleware.RememberClusterMiddleware``),
# so logging in again lands on it rather than on the first cluster.
CLUSTER_COOKIE = "schedboard_cluster"


def selected_cluster(request: HttpRequest, clusters: list[Cluster]) -> Cluster | None:
    """``?cluster=<id>`` (404 if unknown), else the cluster last chosen in this session or, after
    logging in again, in this browser; else the demo cluster, else the first one. Choosing one
    is remembered, so a page reached without the parameter never quietly switches to another
    cluster's policies."""
    wanted = request.GET.get("cluster")
    if wanted:
        cluster_id = parse_id(wanted)
        if cluster_id is None:
            raise Http404(f"No cluster with id {wanted!r}.")
        cluster = get_object_or_404(Cluster, pk=cluster_id)
        request.session[SESSION_CLUSTER] = cluster.pk
        return cluster
    remembered = request.session.get(SESSION_CLUSTER) or parse_id(
        request.COOKIES.get(CLUSTER_COOKIE, "")
    )
    for cluster in clusters:
        if cluster.pk == remembered:
            return cluster
    demo = [cluster for cluster in clusters if cluster.kind == ClusterKind.DEMO]
    candidates = demo or clusters
    return candidates[0] if candidates else None


def stored_snapshot(cluster: Cluster, snapshot_id: str | None = None) -> ClusterSnapshot | None:
    """The cluster's snapshot ``snapshot_id`` (404 if not the cluster's), else its newest."""
    if snapshot_id:
        pk = parse_id(snapshot_id)
        if pk is None:
            raise Http404("No such snapshot.")
        return get_object_or_404(ClusterSnapshot.snapshots.summaries(), pk=pk, cluster=cluster)
    return cluster.latest_snapshot()


class SnapshotUnreadable(Exception):
    """The engine cannot read the stored objects (the page falls back to a raw summary)."""


def engine_snapshot(stored: ClusterSnapshot) -> Snapshot:
    """The engine snapshot of ``stored``: only where the engine state is held (questions)."""
    try:
        return snapshot_for(stored)
    except (InputError, ValueError, TypeError, AttributeError, KeyError) as exc:
        raise SnapshotUnreadable(str(exc)) from exc


@dataclass(frozen=True)
class LoadAwareSource:
    """Which LoadAwareScheduling args apply to a cluster, and where they come from."""

    plugin: LoadAwareScheduling
    origin: str
    profile: str | None
    profiles: list[str]  # profiles that enable LoadAwareScheduling
    filter_enabled: bool
    score_enabled: bool
    digest: str
    warning: str = ""


def loadaware_source(cluster: Cluster, profile: str | None = None) -> LoadAwareSource:
    """The cluster's scheduler configuration (its ``profile``, else the first profile enabling
    LoadAwareScheduling); Koordinator's defaults when there is none."""
    warning = ""
    try:
        choice = evaluation.choose_configuration(cluster, None)
    except evaluation.EvaluationError as exc:  # pragma: no cover - defensive
        choice = evaluation.ConfigurationChoice(None, None, None)
        warning = str(exc)
    engine = None
    if choice.document is not None:
        try:
            engine = engine_for(choice.document)
        except ConfigurationInvalid as exc:
            warning = f"The cluster's scheduler configuration is invalid ({exc}); showing defaults."
    if engine is not None:
        with_plugin = [name for name, fw in engine.frameworks.items() if PLUGIN in fw.instances]
        name = profile if profile in with_plugin else (with_plugin[0] if with_plugin else None)
        described = f"scheduler configuration #{choice.id}" + (
            f" v{choice.version}" if choice.version is not None else ""
        )
        if name is not None:
            framework = engine.frameworks[name]
            plugin = framework.instances[PLUGIN]
            assert isinstance(plugin, LoadAwareScheduling)
            return LoadAwareSource(
                plugin=plugin,
                origin=f"{described}, profile {name}",
                profile=name,
                profiles=with_plugin,
                filter_enabled=any(p is plugin for p in framework.filters),
                score_enabled=any(s.plugin is plugin for s in framework.scores),
                digest=document_digest(choice.document),
                warning=warning,
            )
        warning = warning or (
            f"No profile of {described} enables LoadAwareScheduling: its filter does not run "
            "for this cluster. Thresholds shown are Koordinator's defaults."
        )
    plugin = default_plugin()
    return LoadAwareSource(
        plugin=plugin,
        origin="Koordinator's defaults (no scheduler configuration)"
        if choice.document is None
        else "Koordinator's defaults",
        profile=None,
        profiles=[],
        filter_enabled=True,
        score_enabled=True,
        digest="defaults",
        warning=warning,
    )


def _load_key(stored: ClusterSnapshot, source: LoadAwareSource) -> tuple[Any, ...]:
    return (stored.cluster_id, snapshot_key(stored), source.digest, source.profile)


def _prepared_key(source: LoadAwareSource) -> str:
    return f"{source.digest}:{source.profile or ''}"


def trend_key(source: LoadAwareSource) -> str:
    """The configuration key the snapshot trends are recorded under (as prepared views)."""
    return _prepared_key(source)


def prepare_newest(cluster_id: int) -> bool:
    """Prepare the views of the cluster's newest snapshot; False when there is nothing (left)
    to prepare (the cluster or its snapshots are gone, they were prepared already, or the
    snapshot is unreadable)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    stored = cluster.latest_snapshot() if cluster else None
    if stored is None:
        return False
    try:
        return prepare_views(stored)
    except SnapshotUnreadable:
        return False


def prepare_views(stored: ClusterSnapshot, source: LoadAwareSource | None = None) -> bool:
    """Build and store what the pages need of ``stored`` (where the engine state is held, once
    a snapshot is stored or a page asks): the dashboard's load for the LoadAware args in force
    (``source``, else the cluster's) and the pending pods the evaluate form offers. False when
    they are stored already; :class:`SnapshotUnreadable` when the engine cannot read it."""
    source = source or loadaware_source(stored.cluster)
    key = _prepared_key(source)
    if prepared.has(stored, prepared.LOAD, key):
        return False
    load = _builder(stored, source)()
    pending = pending_choices(engine_snapshot(stored))
    prepared.save(stored, prepared.LOAD, key, prepared.encode_load(load))
    prepared.save(stored, prepared.PENDING, "", pending)
    trends.record(stored, key, load)
    return True


def ask_prepared(stored: ClusterSnapshot, source: LoadAwareSource) -> None:
    """Have the engine tier prepare the views of ``stored`` for ``source`` (at once when they
    are, or as soon as the engine worker is done preparing them after the refresh)."""
    try:
        client.ask(
            stored.cluster_id, "prepare-views", {"snapshot": stored.pk, "profile": source.profile}
        )
    except Refused as exc:
        raise SnapshotUnreadable(str(exc)) from None


def pending_choices(snapshot: Snapshot) -> list[tuple[str, dict[str, Any]]]:
    """The first ``MAX_PENDING_CHOICES`` pending pods by key, with their manifests."""
    pods = sorted(snapshot.pending, key=lambda pod: pod.key)[:MAX_PENDING_CHOICES]
    return [(pod.key, dict(pod.raw)) for pod in pods]


def pending_for_form(stored: ClusterSnapshot) -> list[tuple[str, dict[str, Any]]]:
    """``pending_choices`` of ``stored``, as prepared (asking the engine tier to, first)."""
    ready = prepared.read(stored, prepared.PENDING, "")
    if ready is None:
        ask_prepared(stored, loadaware_source(stored.cluster))
        ready = prepared.read(stored, prepared.PENDING, "") or []
    return [(key, raw) for key, raw in ready]


def _prepared_load(stored: ClusterSnapshot, source: LoadAwareSource) -> ClusterLoad | None:
    data = prepared.read(stored, prepared.LOAD, _prepared_key(source))
    return None if data is None else prepared.decode_load(data)


def _builder(stored: ClusterSnapshot, source: LoadAwareSource) -> Callable[[], ClusterLoad]:
    def build() -> ClusterLoad:
        snapshot = engine_snapshot(stored)
        with gc_paused():  # LoadAware's state and 5,000 rows: acyclic objects
            return cluster_load(
                snapshot,
                source.plugin,
                stored.taken_at,
                origin=source.origin,
                profile=source.profile,
                filter_enabled=source.filter_enabled,
                score_enabled=source.score_enabled,
            )

    return build


@dataclass(frozen=True)
class PageLoad:
    """What the dashboard shows: the load and the snapshot it is of."""

    load: ClusterLoad
    shown: ClusterSnapshot


def load_for_page(stored: ClusterSnapshot, source: LoadAwareSource) -> PageLoad:
    """The dashboard's load of ``stored``: kept by this process, else as prepared (asking the
    engine tier to prepare it first when it is not)."""
    key = _load_key(stored, source)
    ready = _loads.get(key)
    if ready is not None:
        return PageLoad(_named(ready, source), stored)
    load = _prepared_load(stored, source)
    if load is None:
        ask_prepared(stored, source)
        load = _prepared_load(stored, source)
    if load is None:
        raise SnapshotUnreadable("the engine prepared no load for this snapshot")
    return PageLoad(_named(_loads.get_or_build(key, lambda: load), source), stored)


def _named(load: ClusterLoad, source: LoadAwareSource) -> ClusterLoad:
    """``load`` naming the configuration in force now: a load is kept by the args' digest, so
    one prepared under v7 serves again after a revert makes the same args v9."""
    if load.args.origin == source.origin:
        return load
    return replace(load, args=replace(load.args, origin=source.origin))


def node_for_page(stored: ClusterSnapshot, source: LoadAwareSource, name: str) -> NodeDetail | None:
    """Node ``name`` of ``stored`` in detail, from the engine tier (None: no such node)."""
    payload = {"snapshot": stored.pk, "profile": source.profile, "name": name}
    try:
        answer = client.ask(stored.cluster_id, "node-detail", payload)
    except Refused as exc:
        raise SnapshotUnreadable(str(exc)) from None
    return node_detail_from_json(answer["node"]) if answer["node"] is not None else None


def reported_resources(cluster: Cluster) -> list[str] | None:
    """The resources some node of the cluster's newest snapshot reports in its allocatable;
    None when not known (no snapshot, or unreadable)."""
    stored = cluster.latest_snapshot()
    if stored is None:
        return None
    try:
        return rendering.reported_resources(stored)
    except Refused:
        return None
