"""Field-level merge of an edit with a change someone else saved meanwhile.

An editor carries the version it was opened at (``base_version``) through every Preview to
Save. When the object has moved on since, nothing is saved until the user has seen the other
change: fields only they changed are merged into the form, fields only the user changed are
kept, and a field both changed to different values needs the user to choose one of the two.
The re-shown form says which version it merged (``merged_version``); saving it is the
confirmation. Values are compared as the form cleans them, so ``cpu: 60`` and ``{cpu: 60}``
are the same change.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.http import QueryDict

from policy.core.models import VersionedModel
from policy.core.params import parse_id
from policy.policies.services import VersionNotFound, version_state
from policy.web.forms import policies as pf

MINE, THEIRS = "mine", "theirs"
CHOICE_PREFIX = "resolve-"


@dataclass(frozen=True)
class FieldChange:
    """One field of the merge: its value at the base version, theirs (now) and the user's."""

    name: str
    label: str
    base: str | None  # None: the base version is not in the history
    theirs: str
    mine: str
    choice: str = ""  # for a field both changed: MINE, THEIRS or "" (not chosen yet)

    @property
    def input_name(self) -> str:
        return f"{CHOICE_PREFIX}{self.name}"


@dataclass
class Merge:
    """What the user's edit (from ``base``) and the current version (``version``) each
    changed, and the form data with both merged."""

    base: int
    version: int
    theirs: list[FieldChange] = field(default_factory=list)  # merged in from their change
    mine: list[FieldChange] = field(default_factory=list)  # kept from the user's input
    both: list[FieldChange] = field(default_factory=list)  # changed by both: to choose
    data: QueryDict | None = None
    base_known: bool = True
    confirmed: bool = False  # the user saw this merge (its form was shown) and posts it

    @property
    def unresolved(self) -> list[FieldChange]:
        return [change for change in self.both if change.choice not in (MINE, THEIRS)]

    @property
    def ready(self) -> bool:
        """Preview and Save may go on: the merged form was shown and every clash chosen."""
        return self.confirmed and not self.unresolved


def base_version(post: QueryDict) -> int | None:
    """The version the editor was opened at (older forms send only ``version``)."""
    return parse_id(post.get("base_version")) or parse_id(post.get("version"))


def _instance_at(obj: VersionedModel, version: int) -> VersionedModel | None:
    """A copy of ``obj`` with the fields it had at ``version`` (None when not recorded)."""
    try:
        state = version_state(obj, version)
    except VersionNotFound:
        return None
    then = copy.copy(obj)
    for name, value in state.items():
        try:
            model_field = obj._meta.get_field(name)
        except FieldDoesNotExist:
            continue
        if model_field.is_relation or not model_field.concrete:
            continue
        setattr(then, name, None if value is None else model_field.to_python(value))
    return then


def _data_of(form_class: type[pf.PolicyForm], instance: VersionedModel) -> dict[str, Any]:
    """The form data that shows ``instance`` unchanged."""
    form = form_class(instance=instance)
    return {name: form[name].value() for name in form.fields if name != "version"}


def _cleaned(form_class: type[pf.PolicyForm], data: dict[str, Any]) -> dict[str, Any]:
    form = form_class(data)
    form.is_valid()
    return dict(getattr(form, "cleaned_data", {}))


def _text(form_field: forms.Field, value: Any) -> str:
    """A value as the form shows it (a resource map's rows or entries one per line)."""
    if isinstance(form_field, forms.BooleanField):
        return "Yes" if value else "No"
    if isinstance(value, dict):
        value = "\n".join(f"{k}: {v}" for k, v in value.items())
    elif isinstance(value, list) and all(isinstance(row, tuple) for row in value):
        value = "\n".join(f"{k}: {v}" for k, v in value if str(k).strip() or str(v).strip())
    if value is None or value == "":
        return "(not set)"
    return str(value)


def _put(data: QueryDict, form_field: forms.Field, name: str, value: Any) -> None:
    """Set ``name`` in posted data to a value as the form shows it."""
    if isinstance(form_field, forms.BooleanField):
        if value:
            data[name] = "on"
        else:
            data.pop(name, None)
    elif isinstance(form_field, pf.ResourceMapField):  # its rows, as the editor posts them
        entries = value if isinstance(value, dict) else {}
        data.pop(name, None)
        data.setlist(pf.RESOURCE_KEY.format(name), [str(k) for k in entries])
        data.setlist(pf.VALUE_KEY.format(name), [str(v) for v in entries.values()])
    else:
        data[name] = "" if value is None else str(value)


def merge(
    form_class: type[pf.PolicyForm], current: VersionedModel, base: int, post: QueryDict, mine: Any
) -> Merge:
    """Merge the user's valid form ``mine`` (edited from version ``base``) with ``current``."""
    then = _instance_at(current, base) if base < current.version else None
    result = Merge(base=base, version=current.version, base_known=then is not None)
    result.confirmed = parse_id(post.get("merged_version")) == current.version
    theirs_data = _data_of(form_class, current)
    theirs_clean = _cleaned(form_class, theirs_data)
    base_data = _data_of(form_class, then) if then is not None else None
    base_clean = _cleaned(form_class, base_data) if base_data is not None else None
    mine_clean = mine.cleaned_data
    data = post.copy()
    for name, form_field in mine.fields.items():
        if name == "version":
            continue
        label = str(mine[name].label)
        theirs_value, mine_value = theirs_clean.get(name), mine_clean.get(name)
        base_value = base_clean.get(name) if base_clean is not None else None
        they_changed = base_clean is None or theirs_value != base_value
        i_changed = base_clean is not None and mine_value != base_value
        if not they_changed and not i_changed:
            continue
        change = FieldChange(
            name=name,
            label=label,
            base=_text(form_field, base_data.get(name)) if base_data is not None else None,
            theirs=_text(form_field, theirs_data.get(name)),
            mine=_text(form_field, mine[name].value()),
            choice=str(post.get(f"{CHOICE_PREFIX}{name}") or ""),
        )
        if mine_value == theirs_value:
            if base_clean is not None:
                result.theirs.append(change)  # theirs, merged in (or the same edit)
            continue
        if they_changed and (i_changed or base_clean is None):
            result.both.append(change)
            if change.choice == THEIRS:
                _put(data, form_field, name, theirs_data.get(name))
        elif they_changed:
            result.theirs.append(change)
            _put(data, form_field, name, theirs_data.get(name))
        else:
            result.mine.append(change)
    data["version"] = str(current.version)
    data["base_version"] = str(base)
    result.data = data
    return result
