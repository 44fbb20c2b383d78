"""Scheduler configuration changes that can break the running scheduler, named for review.

A push that changes ``leaderElection`` can make the scheduler contend for another scheduler's
lease (koord-scheduler taking ``kube-scheduler``'s), one that changes ``clientConnection`` can
cut it off the API server, and a removed profile, a removed plugin or a changed
``schedulerName`` leaves pods nobody schedules or schedules them differently. The dry-run marks
such a change with its reasons; confirming it needs an explicit acknowledgement
(:func:`policy.sync.services.confirm_push`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from policy.clusters.models import Cluster
from scoring import InputError, load_yaml

WATCHED = ("leaderElection", "clientConnection")


def _document(text: str | None) -> Mapping[str, Any] | None:
    if text is None:
        return None
    try:  # the live ConfigMap's text: within the loader's limits (alias bombs, depth)
        value = load_yaml(text)
    except (yaml.YAMLError, InputError):
        return None
    return value if isinstance(value, Mapping) else None


def _profiles(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    profiles = document.get("profiles")
    if not isinstance(profiles, list):
        return []
    return [p for p in profiles if isinstance(p, Mapping)]


def _name(profile: Mapping[str, Any]) -> str:
    return str(profile.get("schedulerName") or "default-scheduler")


def _listed(profile: Mapping[str, Any], which: str) -> dict[str, list[str]]:
    """Plugin names per extension point (``multiPoint`` included) in the ``enabled`` or
    ``disabled`` lists, as written."""
    plugins = profile.get("plugins")
    out: dict[str, list[str]] = {}
    if not isinstance(plugins, Mapping):
        return out
    for point, lists in plugins.items():
        names = lists.get(which) if isinstance(lists, Mapping) else None
        if isinstance(names, list):
            out[str(point)] = [str(p.get("name")) for p in names if isinstance(p, Mapping)]
    return out


def scheduler_attention(before: str | None, after: str | None) -> list[str]:
    """Why a change of the scheduler configuration from ``before`` to ``after`` needs
    attention (empty: it does not). A configuration written where there was none, or text
    that is no document, is compared as an empty document."""
    old = _document(before)
    if old is None:
        return []
    new = _document(after) or {}
    reasons = [
        f"{name} {'removed' if name not in new else 'added' if name not in old else 'changed'}"
        for name in WATCHED
        if old.get(name) != new.get(name)
    ]
    old_profiles, new_profiles = _profiles(old), _profiles(new)
    for i, (was, now) in enumerate(zip(old_profiles, new_profiles, strict=False)):
        if _name(was) != _name(now):
            reasons.append(f"profiles[{i}].schedulerName changed: {_name(was)} -> {_name(now)}")
    by_name = {_name(p): p for p in new_profiles}
    for profile in old_profiles:
        name = _name(profile)
        if name not in by_name:
            reasons.append(f"profile {name} removed")
            continue
        kept = _listed(by_name[name], "enabled")
        for point, names in _listed(profile, "enabled").items():
            for plugin in names:
                if plugin not in kept.get(point, []):
                    reasons.append(f"profile {name}: plugin {plugin} removed from {point}")
        was_disabled = _listed(profile, "disabled")
        for point, names in _listed(by_name[name], "disabled").items():
            for plugin in names:
                if plugin not in was_disabled.get(point, []):
                    reasons.append(f"profile {name}: plugin {plugin} disabled at {point}")
    return reasons


def mark(changes: Sequence[dict[str, Any]], cluster: Cluster) -> list[dict[str, Any]]:
    """The changes, each with ``attention``: the reasons it needs acknowledging (the scheduler
    ConfigMap's change only)."""
    field = f"data[{cluster.scheduler_config_key}]"
    marked = []
    for change in changes:
        is_config = (
            change.get("kind") == "ConfigMap"
            and change.get("namespace") == cluster.scheduler_config_namespace
            and change.get("name") == cluster.scheduler_config_name
            and change.get("field") == field
        )
        reasons = (
            scheduler_attention(change.get("before"), change.get("after")) if is_config else []
        )
        marked.append({**change, "attention": reasons})
    return marked


def needs_acknowledgement(changes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every reason for attention in a plan's changes."""
    return [reason for change in changes for reason in change.get("attention") or []]
