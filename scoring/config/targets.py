"""The scheduler a configuration is for: flavor and version, and how it is inferred.

The target decides which plugin registry names are checked against
(:mod:`~scoring.config.registries`), which Kubernetes release's defaults apply when a document is
evaluated, and which config versions plugin args may be written in. Written ``flavor@version``
(``koord-scheduler@1.7``, ``kube-scheduler@1.28``, ``scheduler-plugins@0.35``, ``custom@1.30``);
for ``custom`` the version is the Kubernetes release the build is based on.

Inference (:func:`infer_target`), when no target is given, from the document alone:

1. the apiVersion implies the newest kube-scheduler that reads it: v1beta1 → 1.22, v1beta2 →
   1.27, v1beta3 → 1.28, v1 → 1.35;
2. names the document enables (at any extension point or in multiPoint) that this in-tree
   registry lacks are "out-of-tree" (``pluginConfig`` names do not count: upstream ignores
   args of plugins that are not enabled);
3. of those, the ones a known build registers decide (names nobody registers do not point at a
   flavor; the chosen registry reports them): none → ``kube-scheduler@1.<minor>``; all
   scheduler-plugins names → ``scheduler-plugins``, all Koordinator names → ``koord-scheduler``,
   each at the newest release that reads the apiVersion and registers every known plugin the
   document enables at the extension points it lists them at (else the newest release reading
   the apiVersion, whose registry reports the mismatch). When the
   names fit both (only ``Coscheduling``), the flavor with a known release reading the
   apiVersion wins, scheduler-plugins first; names of several builds, or plugins only the
   engine models (``LimitAware``) → ``custom@1.<minor>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scoring.config.catalog import CATALOG
from scoring.config.registries import (
    KOORD_SCHEDULER_RELEASES,
    SCHEDULER_PLUGINS_RELEASES,
    Registry,
    Release,
    custom_registry,
    in_tree_plugins,
    koord_registry,
    koordinator_plugin_names,
    kube_scheduler_registry,
    scheduler_plugins_plugin_names,
    scheduler_plugins_registry,
)
from scoring.errors import InputError

KUBE_SCHEDULER = "kube-scheduler"
KOORD_SCHEDULER = "koord-scheduler"
SCHEDULER_PLUGINS = "scheduler-plugins"
CUSTOM = "custom"
FLAVORS = (KUBE_SCHEDULER, KOORD_SCHEDULER, SCHEDULER_PLUGINS, CUSTOM)
MULTI_POINT = "multiPoint"

# The newest kube-scheduler minor that decodes each config version.
NEWEST_MINOR_READING = {"v1beta1": 22, "v1beta2": 27, "v1beta3": 28, "v1": 35}

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


@dataclass(frozen=True)
class Target:
    """A scheduler build: ``flavor`` (see :data:`FLAVORS`) and ``version`` (``major.minor``, or
    None when unknown)."""

    flavor: str
    version: str | None = None

    def __str__(self) -> str:
        return self.flavor if self.version is None else f"{self.flavor}@{self.version}"

    @property
    def kubernetes_minor(self) -> int | None:
        """The Kubernetes minor the build is based on, when known."""
        if self.version is None:
            return None
        major, minor = (int(x) for x in self.version.split("."))
        if self.flavor in (KUBE_SCHEDULER, CUSTOM):
            return minor if major == 1 else None
        if self.flavor == SCHEDULER_PLUGINS:
            return minor if major == 0 else None
        release = KOORD_SCHEDULER_RELEASES.get(self.version)
        return release.kubernetes_minor if release is not None else None

    def minor_for(self, api_version: str) -> int:
        """The Kubernetes minor whose defaults apply: the target's, else the newest release
        that reads ``api_version``."""
        minor = self.kubernetes_minor
        return minor if minor is not None else NEWEST_MINOR_READING.get(api_version, 35)

    def registry(self, api_version: str) -> Registry:
        minor = self.minor_for(api_version)
        if self.flavor == KUBE_SCHEDULER:
            return kube_scheduler_registry(minor)
        if self.flavor == KOORD_SCHEDULER:
            return koord_registry(self.version, minor)
        if self.flavor == SCHEDULER_PLUGINS:
            return scheduler_plugins_registry(self.version, minor)
        return custom_registry(minor)

    def to_dict(self) -> dict[str, Any]:
        return {"flavor": self.flavor, "version": self.version}


def parse_target(text: str) -> Target:
    """``flavor[@version]``; an :class:`InputError` naming the rule when malformed."""
    flavor, _, version = text.strip().partition("@")
    if flavor not in FLAVORS:
        raise InputError(
            f"target: unknown flavor {flavor!r}; expected one of {', '.join(FLAVORS)} "
            "(written flavor@version, e.g. koord-scheduler@1.7)"
        )
    if not version:
        return Target(flavor)
    match = _VERSION.match(version)
    if match is None:
        raise InputError(
            f"target: version {version!r} is not major.minor (e.g. {flavor}@1.28; "
            "a patch or v prefix is allowed and ignored)"
        )
    return Target(flavor, f"{int(match.group(1))}.{int(match.group(2))}")


def target_from_image(image: str) -> Target | None:
    """The build a scheduler container image names, from its repository and tag: a
    ``…/koord-scheduler:v1.7.0`` image is ``koord-scheduler@1.7``, a scheduler-plugins image
    (``registry.k8s.io/scheduler-plugins/kube-scheduler:v0.35.1``) ``scheduler-plugins@0.35``,
    ``registry.k8s.io/kube-scheduler:v1.30.2`` ``kube-scheduler@1.30``. None for any other
    image, or a tag that is not a version (``latest``, a digest only)."""
    reference = image.split("@", 1)[0]
    repository, colon, tag = reference.rpartition(":")
    if not colon or "/" in tag:  # no tag (the colon was a registry port)
        return None
    match = _VERSION.match(tag)
    if match is None:
        return None
    major, minor = int(match.group(1)), int(match.group(2))
    name = repository.rsplit("/", 1)[-1]
    if "scheduler-plugins" in repository and major == 0:
        return Target(SCHEDULER_PLUGINS, f"{major}.{minor}")
    if name == KOORD_SCHEDULER:
        return Target(KOORD_SCHEDULER, f"{major}.{minor}")
    if name == KUBE_SCHEDULER and major == 1:
        return Target(KUBE_SCHEDULER, f"{major}.{minor}")
    return None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _fits(release: Release, uses: Iterable[tuple[str, str]], known: set[str]) -> bool:
    """Whether every known plugin the document enables exists in ``release`` and implements the
    extension point it is listed at (any point, for multiPoint)."""
    registry = {**in_tree_plugins(release.kubernetes_minor), **release.plugins}
    for point, name in uses:
        if name not in known:
            continue
        plugin = registry.get(name)
        if plugin is None or (point != MULTI_POINT and not plugin.implements(point)):
            return False
    return True


def _release_for(
    releases: Mapping[str, Release],
    api_version: str,
    uses: list[tuple[str, str]],
    known: set[str],
) -> str | None:
    """The newest release reading ``api_version`` that the document fits, else the newest
    reading it (its registry then reports what does not fit), else None."""
    reading = sorted(
        (v for v, r in releases.items() if api_version in r.config_versions),
        key=_version_key,
        reverse=True,
    )
    fitting = (v for v in reading if _fits(releases[v], uses, known))
    return next(fitting, reading[0] if reading else None)


def infer_target(api_version: str, plugins: Iterable[str | tuple[str, str]]) -> Target:
    """The target a document most likely runs on (see the module docstring).

    ``plugins`` are the enabled plugins as ``(extension point, name)`` (as
    :func:`document_plugins` gives them) or bare names (as if in multiPoint).
    """
    uses = [(MULTI_POINT, p) if isinstance(p, str) else p for p in plugins]
    minor = NEWEST_MINOR_READING.get(api_version, 35)
    out_of_tree = {n for _, n in uses if n and n != "*"} - set(in_tree_plugins(minor))
    # Names no known build registers do not point at a flavor; the registry chosen from the
    # others reports them (an error where it is complete, as NewFramework would fail).
    known = out_of_tree & (
        koordinator_plugin_names() | scheduler_plugins_plugin_names() | set(CATALOG)
    )
    if not known:
        return Target(KUBE_SCHEDULER, f"1.{minor}")
    candidates = [
        (SCHEDULER_PLUGINS, scheduler_plugins_plugin_names(), SCHEDULER_PLUGINS_RELEASES),
        (KOORD_SCHEDULER, koordinator_plugin_names(), KOORD_SCHEDULER_RELEASES),
    ]
    fitting = [(f, releases) for f, names, releases in candidates if known <= names]
    if not fitting:
        return Target(CUSTOM, f"1.{minor}")  # plugins of several builds: a custom build
    # Names both register (Coscheduling) suggest either; a known release reading the
    # apiVersion decides, then scheduler-plugins, where the shared name comes from.
    for flavor, releases in fitting:
        version = _release_for(releases, api_version, uses, known)
        if version is not None:
            return Target(flavor, version)
    return Target(fitting[0][0])


def document_plugins(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every plugin a (raw) document enables, as ``(extension point or multiPoint, name)``."""
    uses: list[tuple[str, str]] = []
    for profile in doc.get("profiles") or []:
        plugins = profile.get("plugins") if isinstance(profile, Mapping) else None
        if not isinstance(plugins, Mapping):
            continue
        for point, plugin_set in plugins.items():
            if not isinstance(plugin_set, Mapping):
                continue
            for plugin in plugin_set.get("enabled") or []:
                if isinstance(plugin, Mapping) and isinstance(plugin.get("name"), str):
                    uses.append((str(point), plugin["name"]))
    return uses
