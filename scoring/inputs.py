"""Limits on the YAML and JSON documents people hand in, checked before anything is built.

Every entry point that reads a document (the CLI, the API, the web forms) goes through
:func:`load_yaml` / :func:`load_json`, so one bound and one message apply everywhere:

- YAML aliases may not expand a document beyond :data:`MAX_EXPANSION` times its own size,
  counted both in nodes (plus :data:`EXPANSION_ALLOWANCE` nodes) and in characters of its
  scalars (plus :data:`EXPANSION_ALLOWANCE_CHARS`): a 600-character "billion laughs" document
  would otherwise become gigabytes once built, stored or serialized, and so would one long
  string referenced ten thousand times (few nodes, many bytes). The bound is checked on the
  composed node graph, where an alias is a shared node, so checking costs the document's own
  size, not its expansion; an alias that contains itself is refused too.
- Nesting is limited to :data:`MAX_DEPTH` levels (Kubernetes objects nest about 15 deep);
  deeper text is refused instead of exhausting the parser's recursion.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from scoring.errors import InputError

MAX_DEPTH = 64
MAX_EXPANSION = 10
EXPANSION_ALLOWANCE = 10_000
EXPANSION_ALLOWANCE_CHARS = 256 * 1024


class InputLimitError(InputError, ValueError):
    """A document exceeds a limit; the message names the limit. A ValueError too, so code
    that treats unparseable JSON as such (``except ValueError``) treats it the same."""


def load_yaml(
    text: str, *, source: str = "YAML", loader: type[yaml.SafeLoader] = yaml.SafeLoader
) -> Any:
    """One YAML document (None when empty), checked against the limits before it is built."""
    documents = list(_documents(text, source, loader))
    if len(documents) > 1:
        raise yaml.composer.ComposerError(
            "expected a single document in the stream", None, "but found another document", None
        )
    return documents[0] if documents else None


def load_yaml_all(
    text: str, *, source: str = "YAML", loader: type[yaml.SafeLoader] = yaml.SafeLoader
) -> list[Any]:
    """Every YAML document of a stream, each checked against the limits before it is built."""
    return list(_documents(text, source, loader))


def load_json(text: str | bytes, *, source: str = "JSON", **options: Any) -> Any:
    """``json.loads`` that refuses too-deep nesting with :class:`InputLimitError` (the C
    parser would raise RecursionError) and keeps ``json``'s errors for everything else."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise InputLimitError(f"{source}: nested too deeply to read; refused") from None


# libyaml's parser, when PyYAML was built with it: about thirty times faster than the pure
# Python one, so a hostile document is refused in milliseconds rather than a second.
_FAST_LOADER: type[Any] | None = getattr(yaml, "CSafeLoader", None)


def _precheck(text: str, source: str) -> None:
    """Compose ``text`` with libyaml and check the limits, before the (slower) parse that
    builds it. Text libyaml cannot read is left to that parse, which reports it as always."""
    if _FAST_LOADER is None:
        return
    try:
        loader = _FAST_LOADER(text)
    except yaml.YAMLError:
        return
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                check_node_graph(node, source)
    except (yaml.YAMLError, RecursionError):
        return
    finally:
        loader.dispose()


def _documents(text: str, source: str, loader_class: type[yaml.SafeLoader]) -> Iterator[Any]:
    _precheck(text, source)
    loader = loader_class(text)
    loader.name = source  # errors say 'in "<source>", line 3', not "<unicode string>"
    try:
        while True:
            try:
                if not loader.check_node():
                    return
                node = loader.get_node()
            except RecursionError:
                raise _too_deep(source) from None
            if node is None:
                return
            check_node_graph(node, source)
            yield loader.construct_document(node)
    finally:
        loader.dispose()


def check_node_graph(root: Node, source: str) -> None:
    """Refuse a composed document whose aliases expand it too far (in nodes or in characters),
    that refers to itself, or that nests deeper than :data:`MAX_DEPTH` (iteratively: no
    recursion to exhaust)."""
    size: dict[int, tuple[int, int]] = {}  # node id -> (nodes, characters) once expanded
    height: dict[int, int] = {}
    own_chars = 0
    in_progress: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = _children(node)
        if finished:
            in_progress.discard(key)
            chars = _chars(node)
            own_chars += chars
            size[key] = (
                1 + sum(size[id(child)][0] for child in children),
                chars + sum(size[id(child)][1] for child in children),
            )
            height[key] = 1 + max((height[id(child)] for child in children), default=0)
            if height[key] > MAX_DEPTH:
                raise _too_deep(source)
            continue
        if key in size:
            continue
        if key in in_progress:
            raise InputLimitError(f"{source}: an alias refers to a node that contains it")
        in_progress.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in size)
    nodes, chars = size[id(root)]
    _check_expansion(nodes, len(size), source)
    _check_expansion_chars(chars, own_chars, source)


def _chars(node: Node) -> int:
    """A node's own characters: a scalar's text, a collection's brackets."""
    return len(node.value) if isinstance(node.value, str) else 2


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(expanded: int, own: int, source: str) -> None:
    if expanded > MAX_EXPANSION * own + EXPANSION_ALLOWANCE:
        raise InputLimitError(
            f"{source}: aliases expand the document to {expanded:,} values, over "
            f"{MAX_EXPANSION} times its own {own:,} (a YAML alias bomb?); refused"
        )


def _check_expansion_chars(expanded: int, own: int, source: str) -> None:
    if expanded > MAX_EXPANSION * own + EXPANSION_ALLOWANCE_CHARS:
        raise InputLimitError(
            f"{source}: aliases expand the document to {expanded:,} characters, over "
            f"{MAX_EXPANSION} times its own {own:,} (a YAML alias bomb?); refused"
        )


def _too_deep(source: str) -> InputLimitError:
    return InputLimitError(f"{source}: nested deeper than {MAX_DEPTH} levels; refused")
