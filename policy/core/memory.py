"""Freed memory goes back to the system after each web request.

glibc's ``malloc`` keeps the pages of freed blocks for reuse. A request that reads a 5,000-node
explanation or an engine question frees tens of megabytes of short-lived arrays and buffers, and
the holes they leave between longer-lived blocks are kept: a web process that had served 30
decision details held 280 MiB, of which ``malloc_trim`` gives back 115 (docs/benchmarks.md).
``malloc_trim(0)`` hands free pages back; it takes about a millisecond when there is little to
give back. Where the C library has no ``malloc_trim`` (not glibc), nothing is done.

Not after engine tasks: the engine does the same large work for every question, and pages
handed back after one were faulted in again by the next (5 s more CPU in 150 evaluations).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from typing import Any


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


_trim = _malloc_trim()


def release_freed_memory(**_: Any) -> bool:
    """Give free heap pages back to the system (a signal receiver: any arguments); whether
    this C library can."""
    if _trim is None:
        return False
    _trim(0)
    return True
