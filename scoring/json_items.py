"""The items of a JSON ``List`` (or array) decoded one at a time.

``kubectl get -o json`` of a 5,000-node cluster is 60,000 objects. Decoded at once they are
about 300 MiB of dicts, more than the engine snapshot built from them; decoded one by one, each
is dropped once the snapshot has read it. kubectl writes ``kind`` after ``items``, so a first
pass finds where each item ends (decoding it, then dropping it) and reads the other members; the
items are decoded again, one by one, only once the document is known to be a List.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

_decoder = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")

Span = tuple[int, int]


class NotAList(Exception):
    """The text is not a JSON array or List object (read it whole instead)."""


def json_items(text: str) -> Iterator[Mapping[str, Any]]:
    """Each item of ``text``, a JSON array or an object whose ``kind`` ends in ``List`` and
    that has an ``items`` array. Raises :class:`NotAList` before yielding anything when it is
    neither, and :class:`json.JSONDecodeError` (or ``RecursionError``) on bad JSON."""
    start = _skip(text, 0)
    if text.startswith("[", start):
        spans = _array_spans(text, start)
    elif text.startswith("{", start):
        spans = _list_spans(text, start)
    else:
        raise NotAList
    return (_decoder.raw_decode(text, begin)[0] for begin, _ in spans)


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _array_spans(text: str, at: int) -> list[Span]:
    """Where each element of the array opening at ``at`` begins and ends; nothing may follow."""
    spans, end = _elements(text, at)
    if _skip(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, end))
    return spans


def _elements(text: str, at: int) -> tuple[list[Span], int]:
    spans: list[Span] = []
    at = _skip(text, at + 1)
    if text.startswith("]", at):
        return spans, at + 1
    while True:
        _, end = _decoder.raw_decode(text, at)  # decoded to find its end, then dropped
        spans.append((at, end))
        at = _skip(text, end)
        if text.startswith("]", at):
            return spans, at + 1
        if not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _skip(text, at + 1)


def _list_spans(text: str, at: int) -> list[Span]:
    """The items' spans of the List object opening at ``at``."""
    members: dict[str, Any] = {}
    spans: list[Span] | None = None
    at = _skip(text, at + 1)
    while not text.startswith("}", at):
        key, at = _decoder.raw_decode(text, at)
        at = _skip(text, at)
        if not isinstance(key, str) or not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting property name and ':'", text, at)
        at = _skip(text, at + 1)
        if key == "items" and text.startswith("[", at):
            spans, at = _elements(text, at)
        else:
            members[key], at = _decoder.raw_decode(text, at)
            if key == "items":
                spans = None  # (the last of duplicate keys counts, as in json.loads)
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
        elif not text.startswith("}", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
    if _skip(text, at + 1) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, at + 1))
    if spans is None or not str(members.get("kind", "")).endswith("List"):
        raise NotAList
    return spans
