"""Read Kubernetes objects from files as ``kubectl get -o json|yaml`` prints them.

Accepted shapes: a ``kind: List`` (or any ``*List``) with ``items``, a JSON array, a single
object, or a multi-document YAML stream. ``-`` reads standard input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from scoring.errors import InputError
from scoring.inputs import InputLimitError, load_json, load_yaml_all
from scoring.json_items import NotAList, file_items, json_items


def read_text(path: str) -> str:
    """File contents, or stdin for ``-``; an unreadable file is an :class:`InputError`."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def parse_documents(text: str, source: str) -> list[Any]:
    """JSON first (fast, exact), then YAML (which may hold several documents)."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [load_json(text, source=source)]
        except json.JSONDecodeError:
            pass  # YAML flow style is a superset; let YAML report the error
    try:
        return [doc for doc in load_yaml_all(text, source=source) if doc is not None]
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not valid JSON or YAML: {exc}") from None


def flatten(documents: Iterable[Any], source: str) -> Iterator[Mapping[str, Any]]:
    """Expand Lists and arrays into the objects they hold."""
    for doc in documents:
        if isinstance(doc, list):
            yield from flatten(doc, source)
        elif isinstance(doc, Mapping):
            if str(doc.get("kind", "")).endswith("List") and "items" in doc:
                yield from flatten(doc.get("items") or [], source)
            else:
                yield doc
        else:
            raise InputError(f"{source}: expected Kubernetes objects, found {type(doc).__name__}")


def load_objects(paths: Iterable[str]) -> list[Mapping[str, Any]]:
    """Every object from every path, in order."""
    objects: list[Mapping[str, Any]] = []
    for path in paths:
        objects.extend(flatten(parse_documents(read_text(path), path), path))
    return objects


def iter_objects(paths: Iterable[str]) -> Iterator[Mapping[str, Any]]:
    """Every object from every path, in order, as :func:`load_objects`; a JSON List's items
    (what ``kubectl get -o json`` writes) are decoded one at a time, from a file read in
    chunks, so a caller that keeps less than the objects (a snapshot) never holds them all, nor
    the file's text."""
    for path in paths:
        text = read_text(path) if path == "-" else None  # (standard input is read once)
        items = _streamed(path, text)
        if items is None:
            yield from flatten(parse_documents(text or read_text(path), path), path)
        else:
            yield from flatten(items, path)


def _streamed(path: str, text: str | None) -> Iterator[Mapping[str, Any]] | None:
    """The items of the JSON List (or array) in ``text``, else at ``path``; None when it is
    something else or cannot be read so (read whole, it is then read as YAML, or its error is
    reported as usual)."""
    try:
        return json_items(text) if text is not None else file_items(path)
    except RecursionError:
        raise InputLimitError(f"{path}: nested too deeply to read; refused") from None
    except (NotAList, json.JSONDecodeError, UnicodeDecodeError, OSError):
        return None


def load_single(path: str, kind: str) -> Mapping[str, Any]:
    """Exactly one object of ``kind`` from ``path`` (e.g. the pod to place)."""
    objects = [o for o in load_objects([path]) if o.get("kind") == kind]
    if len(objects) != 1:
        raise InputError(f"{path}: expected exactly one {kind}, found {len(objects)}")
    return objects[0]
