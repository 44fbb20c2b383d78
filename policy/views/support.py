"""What the pages share: picking the cluster, the engine snapshot, the LoadAware args in force,
and a small per-process cache of the dashboard's per-node rows."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from policy import evaluation
from policy.choices import ClusterKind
from policy.engine import document_digest, engine_for, snapshot_for, snapshot_key
from policy.models import Cluster, ClusterSnapshot
from policy.ui.loadaware import PLUGIN, ClusterLoad, cluster_load, default_plugin
from scoring.errors import ConfigurationInvalid, InputError
from scoring.plugins.loadaware import LoadAwareScheduling
from scoring.snapshot import Snapshot

log = logging.getLogger(__name__)
V = TypeVar("V")


class _Cache:
    """A few recent values by key; one builder at a time (builds take seconds on big clusters)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.values: OrderedDict[Any, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get_or_build(self, key: Any, build: Callable[[], V]) -> V:
        with self.lock:
            if key in self.values:
                self.values.move_to_end(key)
                value: V = self.values[key]
                return value
            value = build()
            self.values[key] = value
            while len(self.values) > self.size:
                self.values.popitem(last=False)
            return value

    def clear(self) -> None:
        with self.lock:
            self.values.clear()


_loads = _Cache(size=8)


def clear_caches() -> None:
    _loads.clear()


def selected_cluster(request: HttpRequest, clusters: list[Cluster]) -> Cluster | None:
    """``?cluster=<id>`` (404 if unknown), else the demo cluster, else the first one."""
    wanted = request.GET.get("cluster")
    if wanted:
        if not wanted.isdigit():
            raise Http404(f"No cluster with id {wanted!r}.")
        return get_object_or_404(Cluster, pk=int(wanted))
    demo = [cluster for cluster in clusters if cluster.kind == ClusterKind.DEMO]
    candidates = demo or clusters
    return candidates[0] if candidates else None


def stored_snapshot(cluster: Cluster, snapshot_id: str | None = None) -> ClusterSnapshot | None:
    """The cluster's snapshot ``snapshot_id`` (404 if not the cluster's), else its newest."""
    if snapshot_id:
        if not snapshot_id.isdigit():
            raise Http404("No such snapshot.")
        return get_object_or_404(
            ClusterSnapshot.snapshots.summaries(), pk=int(snapshot_id), cluster=cluster
        )
    return cluster.latest_snapshot()


class SnapshotUnreadable(Exception):
    """The engine cannot read the stored objects (the page falls back to a raw summary)."""


def engine_snapshot(stored: ClusterSnapshot) -> Snapshot:
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


def load_of(stored: ClusterSnapshot, source: LoadAwareSource) -> ClusterLoad:
    """Every node's LoadAware view of ``stored`` (cached per snapshot, configuration, profile)."""
    key = (snapshot_key(stored), source.digest, source.profile)

    def build() -> ClusterLoad:
        return cluster_load(
            engine_snapshot(stored),
            source.plugin,
            stored.taken_at,
            origin=source.origin,
            profile=source.profile,
            filter_enabled=source.filter_enabled,
            score_enabled=source.score_enabled,
        )

    return _loads.get_or_build(key, build)
