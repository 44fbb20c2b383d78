"""What every part of the columns format shares: type codes, limits, errors."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
Meta = dict[str, Any]

FORMAT = 1

# JSON type codes of a column's values.
NULL, FALSE, TRUE, INT, FLOAT, STR, LIST, DICT = range(8)

SAFE = 2**62  # integers below this in magnitude can be offset and scaled without overflow
# A number's place in a string template: HOLE, or PADDED and a character giving the width of
# a zero-padded number (``chr(PAD_BASE + width)``). Strings holding either are stored whole.
HOLE = "\x00"
PADDED = "\x01"
PAD_BASE = 0x40


class ColumnarError(ValueError):
    """A value that cannot be stored (not JSON), or bytes that are not packed columns."""


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Packing and unpacking make hundreds of thousands of small objects, none cyclic: the
    cyclic GC would rescan the whole (large) heap again and again for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def type_code(value: Any, path: str) -> int:
    if value is None:
        return NULL
    if value is True:
        return TRUE
    if value is False:
        return FALSE
    kind = type(value)
    if kind is int:
        return INT
    if kind is str:
        return STR
    if kind is float:
        return FLOAT
    if kind is dict:
        return DICT
    if kind is list:
        return LIST
    # Subclasses (IntEnum, numpy scalars, tuples) are stored as the JSON value they print as.
    if isinstance(value, bool | np.bool_):
        return TRUE if value else FALSE
    if isinstance(value, int | np.integer):
        return INT
    if isinstance(value, float | np.floating):
        return FLOAT
    if isinstance(value, str):
        return STR
    if isinstance(value, dict):
        return DICT
    if isinstance(value, list | tuple):
        return LIST
    raise ColumnarError(f"{path}: a {kind.__name__} is not a JSON value")
