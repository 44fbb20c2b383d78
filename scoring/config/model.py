"""The loaded configuration: what each profile's framework runs, and the defaulted document."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.config.catalog import EXTENSION_POINTS
from scoring.config.targets import Target
from scoring.errors import FieldError

__all__ = ["EXTENSION_POINTS", "PluginRef", "Profile", "SchedulerConfiguration"]


@dataclass(frozen=True)
class PluginRef:
    """A plugin at an extension point.

    ``weight`` is the effective weight at ``score`` (the configured weight, else the default
    profile's, else 1; upstream accepts negative weights) and 0 at every other extension point.
    """

    name: str
    weight: int


@dataclass(frozen=True)
class Profile:
    """One scheduling profile as its framework runs it.

    ``plugins`` maps each extension point (v1 JSON names, see :data:`EXTENSION_POINTS`, all
    present) to its plugins in run order, after multiPoint expansion. ``plugin_args`` maps every
    ``pluginConfig`` name to its defaulted args in v1 JSON form, without ``apiVersion``/``kind``
    (unknown plugins' args as given). ``percentage_of_nodes_to_score`` is the profile's own
    setting; None means the global value applies
    (:meth:`SchedulerConfiguration.effective_percentage_of_nodes_to_score`).
    ``kubernetes_minor`` is the Kubernetes release whose scoring semantics apply (the target's;
    None: the newest the engine models).
    """

    scheduler_name: str
    plugins: Mapping[str, tuple[PluginRef, ...]]
    plugin_args: Mapping[str, Mapping[str, Any]]
    percentage_of_nodes_to_score: int | None
    kubernetes_minor: int | None = None

    def plugin_names(self, point: str) -> tuple[str, ...]:
        """The names of the plugins at ``point``, in run order."""
        return tuple(ref.name for ref in self.plugins.get(point, ()))

    def enabled_plugins(self) -> tuple[str, ...]:
        """Every plugin enabled at some extension point, in first-seen order."""
        seen: dict[str, None] = {}
        for point in EXTENSION_POINTS:
            for ref in self.plugins.get(point, ()):
                seen.setdefault(ref.name, None)
        return tuple(seen)


@dataclass(frozen=True)
class SchedulerConfiguration:
    """A defaulted, valid ``KubeSchedulerConfiguration``.

    ``document`` is the whole configuration as kube-scheduler sees it after ``SetDefaults``,
    converted to v1 (JSON-able; plugin args carry their ``apiVersion``/``kind``, as
    kube-scheduler writes them). ``source`` is the document as written (sparse, in its own
    ``api_version``; not compared: two documents that mean the same compare equal); ``target``
    the scheduler it was checked for; ``warnings`` the names that target's registry does not
    know for sure.
    """

    profiles: tuple[Profile, ...]
    document: Mapping[str, Any]
    api_version: str = "kubescheduler.config.k8s.io/v1"
    target: Target | None = None
    warnings: tuple[FieldError, ...] = ()
    source: Mapping[str, Any] | None = field(default=None, compare=False)

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile pods with ``spec.schedulerName == scheduler_name`` are scheduled by."""
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        return None

    @property
    def percentage_of_nodes_to_score(self) -> int:
        """The global ``percentageOfNodesToScore`` (0 means adaptive)."""
        value: int = self.document.get("percentageOfNodesToScore") or 0
        return value

    def effective_percentage_of_nodes_to_score(self, profile: Profile) -> int:
        """The profile's value when set, else the global one (0 means adaptive)."""
        if profile.percentage_of_nodes_to_score is not None:
            return profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score
