"""koord-descheduler's configuration and koordlet's thresholds: adopted as written, read typed.

A refresh that finds the ConfigMap key stores its text unchanged (a change-log row records
each new text; the same text again writes nothing). Reading parses it with the engine
(``scoring.descheduler``), which validates it as koord-descheduler does; an invalid document
is kept and reported, never rewritten.
"""

from __future__ import annotations

import copy
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import yaml
from django.db import transaction
from django.utils import timezone
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from policy.accounts.changes import ChangeContext, record_change
from policy.clusters.models import Cluster
from policy.core.choices import ChangeAction
from policy.policies.models import DeschedulerConfiguration, KoordletThresholdConfig
from scoring import (
    RESOURCE_THRESHOLD_KEY,
    ConfigurationInvalid,
    FieldError,
    InputError,
    ResourceThresholdConfig,
    load_descheduler_configuration,
    parse_descheduler_document,
    parse_resource_thresholds,
    required_field,
)
from scoring import DeschedulerConfiguration as EngineDeschedulerConfiguration

READ_FROM_CLUSTER = "read from the cluster"

Adopted = TypeVar("Adopted", DeschedulerConfiguration, KoordletThresholdConfig)


def descheduler_place(cluster: Cluster) -> str:
    c = cluster
    return (
        f"{c.descheduler_config_namespace}/{c.descheduler_config_name}:{c.descheduler_config_key}"
    )


def koordlet_place(cluster: Cluster) -> str:
    return f"{cluster.slo_config_namespace}/{cluster.slo_config_name}:{RESOURCE_THRESHOLD_KEY}"


def _adopt(
    model: type[Adopted], cluster: Cluster, text: str, place: str, read_at: datetime
) -> Adopted | None:
    """Store ``text`` as the cluster's row; None when it was already stored as is."""
    with transaction.atomic():
        row = model.objects.select_for_update().filter(cluster=cluster).first()
        if isinstance(row, DeschedulerConfiguration) and row.edited:
            return None  # edited here and not pushed yet: the push writes it, not the refresh
        if row is not None and row.source == text and row.configmap == place:
            model.objects.filter(pk=row.pk).update(read_at=read_at)
            return None
        before = None if row is None else row.snapshot()
        if row is None:
            row = model(cluster=cluster, source=text, configmap=place, read_at=read_at)
        else:
            row.source, row.configmap, row.read_at = text, place, read_at
            row.version += 1
        row.save()
        action = ChangeAction.CREATE if before is None else ChangeAction.UPDATE
        record_change(
            ChangeContext.system(),
            row,
            action,
            before=before,
            after=row.snapshot(),
            message=f"{READ_FROM_CLUSTER} ({place})",
        )
        return row


def adopt_descheduler(
    cluster: Cluster, text: str, read_at: datetime
) -> DeschedulerConfiguration | None:
    """koord-descheduler's document as the refresh found it."""
    return _adopt(DeschedulerConfiguration, cluster, text, descheduler_place(cluster), read_at)


def adopt_koordlet(
    cluster: Cluster, text: str, read_at: datetime
) -> KoordletThresholdConfig | None:
    """``resource-threshold-config`` as the refresh found it."""
    return _adopt(KoordletThresholdConfig, cluster, text, koordlet_place(cluster), read_at)


@dataclass
class ParsedDescheduler:
    """A stored descheduler document read by the engine."""

    row: DeschedulerConfiguration
    document: Any = None
    config: EngineDeschedulerConfiguration | None = None
    errors: list[FieldError] = field(default_factory=list)
    unreadable: str = ""

    @property
    def valid(self) -> bool:
        return self.config is not None


def parse_descheduler(row: DeschedulerConfiguration) -> ParsedDescheduler:
    parsed = ParsedDescheduler(row)
    try:
        parsed.document = parse_descheduler_document(row.source, row.configmap)
        parsed.config = load_descheduler_configuration(parsed.document)
    except ConfigurationInvalid as exc:
        parsed.errors = list(exc.errors)
    except InputError as exc:
        parsed.unreadable = str(exc)
    return parsed


def descheduler_of(cluster: Cluster) -> ParsedDescheduler | None:
    row = DeschedulerConfiguration.objects.filter(cluster=cluster).first()
    return None if row is None else parse_descheduler(row)


def koordlet_of(
    cluster: Cluster,
) -> tuple[KoordletThresholdConfig | None, ResourceThresholdConfig | None, str]:
    """The stored row, its parsed strategies (None when unreadable) and why it is unreadable."""
    row = KoordletThresholdConfig.objects.filter(cluster=cluster).first()
    if row is None:
        return None, None, ""
    try:
        return row, parse_resource_thresholds(row.source), ""
    except InputError as exc:
        return row, None, str(exc)


# -- editing LowNodeLoad's args -----------------------------------------------------------------

EDITED = "LowNodeLoad args edited"
PUSHED = "written to the cluster"


class EditInvalid(Exception):
    """The edit would leave a document koord-descheduler refuses; nothing was saved."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


class StaleVersion(Exception):
    def __init__(self, current: int) -> None:
        super().__init__(f"the object is at version {current}")
        self.current = current


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """JSON merge patch (RFC 7386): null deletes a key, objects merge, the rest replaces."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def edited_text(source: str, patch: Mapping[str, Any], document: Any) -> str:
    """``source`` with ``patch`` merged into LowNodeLoad's args, as text: a YAML document keeps
    its comments, quotes and layout (a round-trip edit of only the patched leaves); JSON, or
    YAML that does not read back as ``document`` (the patched document), is written anew."""
    if not source.lstrip().startswith(("{", "[")):
        for edit in (_in_place, _round_trip):  # the smallest change that reads back right
            try:
                text = edit(source, patch)
                if text is not None and parse_descheduler_document(text) == document:
                    return text
            except (YAMLError, InputError, ValueError, TypeError, KeyError, IndexError):
                continue
        return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)
    return json.dumps(document, indent=2) + "\n"


_PLAIN_SCALAR = re.compile(r"[^\s#][^#]*?(?=\s+#|\s*$)")


def _in_place(source: str, patch: Mapping[str, Any]) -> str | None:
    """``source`` with each patched scalar replaced where it is written, every other character
    kept; None when the patch adds, removes or reshapes anything (then :func:`_round_trip`)."""
    tree = YAML().load(source)
    args = _lownodeload_entry(tree) if isinstance(tree, dict) else None
    if args is None:
        return None
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    if not _scalar_edits(args, patch, edits):
        return None
    for line, col, value in sorted(edits, reverse=True):
        text = lines[line]
        token = _PLAIN_SCALAR.match(text, col)
        if token is None or text[col] in "\"'[{|>&*!":
            return None  # quoted, flow or block scalars: left to the round trip
        lines[line] = text[:col] + value + text[token.end() :]
    return "".join(lines)


def _scalar_edits(target: Any, patch: Mapping[str, Any], edits: list[tuple[int, int, str]]) -> bool:
    """Collect (line, column, new text) of each patched scalar; False when the patch does
    anything else (a new or deleted key, a map or list replaced)."""
    for key, value in patch.items():
        if not isinstance(target, CommentedMap) or key not in target or value is None:
            return False
        if isinstance(value, Mapping):
            if not _scalar_edits(target[key], value, edits):
                return False
            continue
        if not (_number(value) and _number(target[key])):
            return False  # strings and booleans have several spellings; a number has one
        line, col = target.lc.value(key)
        edits.append((line, col, json.dumps(value)))
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _round_trip(source: str, patch: Mapping[str, Any]) -> str | None:
    reader = YAML()  # round-trip mode: comments and layout are part of what it reads
    reader.preserve_quotes = True
    reader.width = 4096  # never fold a line the person wrote on one
    tree = reader.load(source)
    args = _lownodeload_entry(tree) if isinstance(tree, dict) else None
    if args is None:
        return None
    _merge(args, patch)
    out = io.StringIO()
    reader.dump(tree, out)
    return out.getvalue()


def _lownodeload_entry(document: Any) -> dict[str, Any] | None:
    """LowNodeLoad's ``args`` in the profile that enables it (else any profile's entry)."""
    entries = [
        (profile, entry)
        for profile in (document.get("profiles") or [])
        if isinstance(profile, dict)
        for entry in (profile.get("pluginConfig") or [])
        if isinstance(entry, dict) and entry.get("name") == "LowNodeLoad"
    ]
    if not entries:
        return None
    entry = entries[0][1]
    if not isinstance(entry.get("args"), dict):
        entry["args"] = {}
    args: dict[str, Any] = entry["args"]
    return args


def lownodeload_args(row: DeschedulerConfiguration) -> Mapping[str, Any] | None:
    """LowNodeLoad's args as written (None: no ``pluginConfig`` entry for it, or a document
    that cannot be read)."""
    try:
        document = parse_descheduler_document(row.source, row.configmap)
    except InputError:
        return None
    return _lownodeload_entry(document) if isinstance(document, dict) else None


def patched(
    row: DeschedulerConfiguration, patch: Mapping[str, Any]
) -> tuple[Any, EngineDeschedulerConfiguration]:
    """The document with ``patch`` merged into LowNodeLoad's args, and what koord-descheduler
    loads from it; :class:`EditInvalid` when it would refuse it. Nothing is saved."""
    try:
        document = parse_descheduler_document(row.source, row.configmap)
    except InputError as exc:
        raise EditInvalid([FieldError("", "Unreadable", str(exc))]) from None
    args = _lownodeload_entry(document) if isinstance(document, dict) else None
    if args is None:
        raise EditInvalid(
            [
                required_field(
                    "pluginConfig[LowNodeLoad]",
                    "the document has no LowNodeLoad pluginConfig entry to edit",
                )
            ]
        )
    _merge(args, patch)
    try:
        return document, load_descheduler_configuration(document)
    except ConfigurationInvalid as exc:
        raise EditInvalid(list(exc.errors)) from None


def edit_lownodeload_args(
    row_id: int, patch: Mapping[str, Any], expected_version: int | None, ctx: ChangeContext
) -> DeschedulerConfiguration:
    """Merge ``patch`` into LowNodeLoad's args as written; the document is validated as
    koord-descheduler loads it, and only the patched leaves change (the other fields, the
    plugins schedboard does not model, stay as they were)."""
    with transaction.atomic():
        row = DeschedulerConfiguration.objects.select_for_update().get(pk=row_id)
        if expected_version is not None and row.version != expected_version:
            raise StaleVersion(row.version)
        document, _ = patched(row, patch)
        before = row.snapshot()
        row.source = edited_text(row.source, patch, document)
        row.edited = True
        row.version += 1
        row.save()
        record_change(
            ctx, row, ChangeAction.UPDATE, before=before, after=row.snapshot(), message=EDITED
        )
        return row


def mark_pushed(cluster: Cluster, text: str) -> None:
    """The push wrote ``text``: the next refresh reads what the cluster holds again."""
    DeschedulerConfiguration.objects.filter(cluster=cluster, source=text, edited=True).update(
        edited=False
    )


def text_to_push(cluster: Cluster) -> str | None:
    """The document a push writes: the stored one when it was edited here, else nothing."""
    row = DeschedulerConfiguration.objects.filter(cluster=cluster, edited=True).first()
    return None if row is None else row.source


IMPORTED = "imported"


def import_document(
    cluster: Cluster, text: str, expected_version: int | None, ctx: ChangeContext
) -> DeschedulerConfiguration:
    """Store ``text`` as the cluster's descheduler configuration, kept as written and marked
    edited (the next push writes it); :class:`EditInvalid` when koord-descheduler would refuse
    it. ``expected_version`` guards a replacement (None: whatever is there)."""
    try:
        load_descheduler_configuration(parse_descheduler_document(text, "import"))
    except ConfigurationInvalid as exc:
        raise EditInvalid(list(exc.errors)) from None
    except InputError as exc:
        raise EditInvalid([FieldError("", "Unreadable", str(exc))]) from None
    with transaction.atomic():
        row = DeschedulerConfiguration.objects.select_for_update().filter(cluster=cluster).first()
        if row is not None and expected_version is not None and row.version != expected_version:
            raise StaleVersion(row.version)
        before = None if row is None else row.snapshot()
        if row is None:
            row = DeschedulerConfiguration(
                cluster=cluster, configmap=descheduler_place(cluster), read_at=timezone.now()
            )
        else:
            row.version += 1
        row.source, row.edited = text, True
        row.save()
        record_change(
            ctx, row, ChangeAction.IMPORT, before=before, after=row.snapshot(), message=IMPORTED
        )
        return row
