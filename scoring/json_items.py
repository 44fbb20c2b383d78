"""The items of a JSON ``List`` (or array) decoded one at a time.

``kubectl get -o json`` of a 5,000-node cluster is 60,000 objects. Decoded at once they are
about 300 MiB of dicts, more than the engine snapshot built from them; decoded one by one, each
is dropped once the snapshot has read it. kubectl writes ``kind`` after ``items``, so a first
pass finds where each item ends (decoding it, then dropping it) and reads the other members; the
items are decoded again, one by one, only once the document is known to be a List. A file is
read the same way a chunk at a time (:func:`file_items`), so its text is never held whole either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

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


# -- files read in chunks -------------------------------------------------------------------------

CHUNK = 1 << 22  # characters of a file read at a time


class _Stream:
    """A file's text read a chunk at a time, with a position; consumed text is dropped."""

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle
        self.text = ""
        self.at = 0
        self.eof = False

    def _more(self) -> bool:
        if self.eof:
            return False
        # At least what is held unread: a value longer than a chunk is decoded again only as
        # often as its length doubles, not once per chunk.
        chunk = self.handle.read(max(CHUNK, len(self.text) - self.at))
        if not chunk:
            self.eof = True
            return False
        self.text = self.text[self.at :] + chunk
        self.at = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            self.at = _skip(self.text, self.at)
            if self.at < len(self.text):
                return self.text[self.at]
            if not self._more():
                return ""

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise json.JSONDecodeError(f"Expecting {char!r}", self.text, self.at)
        self.at += 1

    def value(self) -> Any:
        """The next JSON value; one that ends where the text read so far ends may go on."""
        self.peek()
        while True:
            try:
                value, end = _decoder.raw_decode(self.text, self.at)
            except json.JSONDecodeError:
                if self._more():
                    continue
                raise
            if end == len(self.text) and self._more():
                continue
            self.at = end
            return value


def _elements_of(stream: _Stream) -> Iterator[Any]:
    stream.take("[")
    if stream.peek() == "]":
        stream.at += 1
        return
    while True:
        yield stream.value()
        if stream.peek() == "]":
            stream.at += 1
            return
        stream.take(",")


def _objects_of(stream: _Stream, members: dict[str, Any]) -> Iterator[Any]:
    """The array's elements, or the ``items`` of the object (its other members into
    ``members``; ``items`` there counts the arrays given for it)."""
    if stream.peek() == "[":
        members.update(kind="List", items=1)
        yield from _elements_of(stream)
    elif stream.peek() == "{":
        stream.take("{")
        while stream.peek() != "}":
            key = stream.value()
            if not isinstance(key, str):
                raise json.JSONDecodeError("Expecting property name", stream.text, stream.at)
            stream.take(":")
            if key == "items" and stream.peek() == "[":
                members["items"] = members.get("items", 0) + 1
                yield from _elements_of(stream)
            else:
                value = stream.value()
                members[key] = members.get(key, 0) + 2 if key == "items" else value
            if stream.peek() != "}":
                stream.take(",")
        stream.take("}")
    else:
        raise NotAList
    if stream.peek() != "":
        raise json.JSONDecodeError("Extra data", stream.text, stream.at)


def file_items(path: str) -> Iterator[Mapping[str, Any]]:
    """:func:`json_items` of a file, read a chunk at a time: its text is never held whole,
    for a second pass. The first pass, before this returns, checks that the file is a List
    (kubectl writes ``kind`` after ``items``) and valid JSON; the items are decoded again, one
    at a time, as the returned iterator is read."""
    members: dict[str, Any] = {}
    with open(path, encoding="utf-8") as handle:
        for _ in _objects_of(_Stream(handle), members):
            pass
    if members.get("items") != 1 or not str(members.get("kind", "")).endswith("List"):
        raise NotAList
    return _items_of_file(path)


def _items_of_file(path: str) -> Iterator[Mapping[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        yield from _objects_of(_Stream(handle), {})
