"""RFC 7386 JSON merge patch: what a pod fix's ``patch`` means, and how it is checked."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` merged in (RFC 7386 section 2): an object patch merges key by
    key, ``null`` removes a key, anything else (arrays included) replaces the value whole."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result
