"""The profile editor's YAML mode: the whole profile as one v1 ``KubeSchedulerProfile`` text,
read into the same fields the form mode has (so validation, merge, preview and save are the
form's), and written from them.

Only what is set is written: no ``percentageOfNodesToScore`` nobody set, no empty lists.
LoadAwareScheduling's args are not in ``pluginConfig`` here, as in the form mode: they have
their own editor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from django import forms

from policy.web.forms.policies import SchedulerProfileForm, YAMLField

FIELD = "profile_yaml"  # the textarea's name; a POST holding it comes from the YAML mode
KEYS = {
    "schedulerName": "scheduler_name",
    "percentageOfNodesToScore": "percentage_of_nodes_to_score",
    "plugins": "plugins",
    "pluginConfig": "plugin_config",
}
_WHICH = ("enabled", "disabled")
_ENTRY_KEYS = {"name", "weight"}


def as_yaml(values: Mapping[str, Any]) -> str:
    """The profile of ``values`` (the form's :meth:`SchedulerProfileForm.values` shape) as
    v1 YAML."""
    profile: dict[str, Any] = {}
    if values.get("scheduler_name"):
        profile["schedulerName"] = values["scheduler_name"]
    if values.get("percentage_of_nodes_to_score") is not None:
        profile["percentageOfNodesToScore"] = values["percentage_of_nodes_to_score"]
    plugins = {
        point: {which: list(lists[which]) for which in _WHICH if lists.get(which)}
        for point, lists in (values.get("plugins") or {}).items()
    }
    if any(plugins.values()):
        profile["plugins"] = {point: lists for point, lists in plugins.items() if lists}
    if values.get("plugin_config"):
        profile["pluginConfig"] = values["plugin_config"]
    return yaml.safe_dump(profile, sort_keys=False, default_flow_style=False) if profile else ""


def stored_yaml(profile: Any) -> str:
    """The YAML of a stored profile ("" for a new one)."""
    if profile is None:
        return ""
    return as_yaml({name: getattr(profile, name) for name in KEYS.values()})


def form_fields(text: str) -> dict[str, str]:
    """The form mode's fields for the profile in ``text``; a ValidationError naming the field
    and the rule when it is not a profile."""
    profile = YAMLField(shape=dict, empty={}).clean(text)
    unknown = sorted(set(profile) - set(KEYS))
    if unknown:
        raise forms.ValidationError(
            f"{', '.join(unknown)}: not a field of a profile here (it has "
            f"{', '.join(KEYS)}; the configuration's other fields are on its own page)."
        )
    fields: dict[str, str] = {}
    name = profile.get("schedulerName")
    if name is not None and not isinstance(name, str):
        raise forms.ValidationError("schedulerName: must be a string.")
    fields["scheduler_name"] = name or ""
    percentage = profile.get("percentageOfNodesToScore")
    if percentage is not None and (isinstance(percentage, bool) or not isinstance(percentage, int)):
        raise forms.ValidationError("percentageOfNodesToScore: must be an integer.")
    fields["percentage_of_nodes_to_score"] = "" if percentage is None else str(percentage)
    fields.update(_plugin_boxes(profile.get("plugins")))
    config = profile.get("pluginConfig")
    if config is not None and not isinstance(config, list):
        raise forms.ValidationError("pluginConfig: must be a list of {name, args}.")
    fields["plugin_config"] = yaml.safe_dump(config, sort_keys=False) if config else ""
    return fields


def _plugin_boxes(plugins: Any) -> dict[str, str]:
    if plugins is None:
        plugins = {}
    if not isinstance(plugins, dict):
        raise forms.ValidationError("plugins: must be a mapping of extension point to lists.")
    points = SchedulerProfileForm.POINTS
    unknown = sorted(set(plugins) - set(points))
    if unknown:
        raise forms.ValidationError(
            f"plugins.{unknown[0]}: not an extension point (one of {', '.join(points)})."
        )
    boxes = {}
    for point in points:
        lists = plugins.get(point) or {}
        if not isinstance(lists, dict) or set(lists) - set(_WHICH):
            raise forms.ValidationError(f"plugins.{point}: has only enabled and disabled lists.")
        for which in _WHICH:
            boxes[f"plugins_{point}_{which}"] = "\n".join(
                _line(f"plugins.{point}.{which}[{i}]", entry)
                for i, entry in enumerate(lists.get(which) or [])
            )
    return boxes


def _line(path: str, entry: Any) -> str:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise forms.ValidationError(f"{path}: each plugin is {{name, weight}} with a name.")
    if set(entry) - _ENTRY_KEYS:
        raise forms.ValidationError(f"{path}: a plugin has only name and weight.")
    if " " in entry["name"].strip() or not entry["name"].strip():
        raise forms.ValidationError(f"{path}.name: a plugin name is one word.")
    weight = entry.get("weight")
    if weight is None:
        return str(entry["name"])
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise forms.ValidationError(f"{path}.weight: must be an integer.")
    return f"{entry['name']} {weight}"
