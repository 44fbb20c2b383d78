"""JSON values stored column by column: compact, lossless, and readable a few rows at a time.

A list of similar records (a decision's 5,000 nodes) repeats the same keys and mostly the same
values thousands of times. Stored as columns, one typed array per path, it compresses to a small
fraction of its JSON. The layout is a simplified Dremel:

- a column is a list of values; it records each value's JSON type (one code when all agree);
- integers go to one array of the smallest dtype that holds them, as ``base + step * value``
  (distinct values plus codes when there are few); integers beyond 64 bits go as decimal text.
  An integer array that is an earlier one times a factor plus a constant refers to it, and one
  that a ratio of two row-aligned arrays predicts (a percentage of allocatable) stores only
  what the prediction misses;
- floats go as integers with a decimal scale when every one is a short decimal (``0.0126``),
  else as float64;
- strings are indices into one table shared by every column; a column of many distinct strings
  that differ only in their numbers ("cpu 12% (5% measured …)") stores each string's template
  and its numbers instead;
- lists store their lengths and their items: short lists one column per position (every
  list's first item, every list's second item, …, so a node's per-plugin entries form one
  column per plugin), long lists one column of every item in order;
- dicts store their key sequence (a shape, which keeps the key order) and one child column per
  key.

:func:`pack` writes the columns as one byte string; :func:`unpack` reads it back as a
:class:`Column` whose :meth:`Column.take` rebuilds any rows without building the others.
Decoded values equal the packed ones (``==``, key order included); tuples are stored as lists,
as JSON would.
"""

from __future__ import annotations

import gc
import json
import re
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
Meta = dict[str, Any]

FORMAT = 1

# JSON type codes of a column's values.
NULL, FALSE, TRUE, INT, FLOAT, STR, LIST, DICT = range(8)

_SAFE = 2**62  # integers below this in magnitude can be offset and scaled without overflow
_DTYPES = ("u1", "i1", "u2", "i2", "u4", "i4", "i8")
_FEW_DISTINCT = 256  # integer columns with at most this many distinct values store codes
_MAX_SCALE = 9  # decimal places tried for floats
_EXACT_FLOAT = 2.0**53
# Lists up to this long store items position by position (first items, second items, …).
_MAX_POSITIONS = 64
# A string column is stored as templates when it has more distinct strings than this and
# templates at most halve them.
_TEMPLATE_MIN_DISTINCT = 16
# A number inside a string that ``str(int(token))`` gives back exactly (no leading zero).
_NUMBER = re.compile(r"[1-9][0-9]{0,17}|0")
_HOLE = "\x00"  # a number's place in a template (strings holding it are stored whole)
# Derived columns: tried on arrays of at least this many rows with at least this many distinct
# values among the first _SAMPLE; predictions use operands below _PREDICT_LIMIT in magnitude
# and factors up to _MAX_FACTOR, so no product overflows 64 bits.
_PREDICT_MIN_ROWS = 32
_PREDICT_MIN_DISTINCT = 8
_SAMPLE = 64
_PREDICT_LIMIT = 2**40
_MAX_FACTOR = 10**6


class ColumnarError(ValueError):
    """A value that cannot be stored (not JSON), or bytes that are not packed columns."""


# -- writing ------------------------------------------------------------------------------------


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Packing and unpacking make hundreds of thousands of small objects, none cyclic: the
    cyclic GC would rescan the whole (large) heap again and again for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def pack(values: Sequence[Any]) -> bytes:
    """``values`` as packed columns (uncompressed; see the module docstring)."""
    writer = _Writer()
    with _no_cyclic_gc():
        root = writer.column(values, "$")
    header = {
        "format": FORMAT,
        "strings": list(writer.strings),
        "buffers": [[dtype, len(data)] for dtype, data in writer.buffers],
        "arrays": writer.arrays,
        "root": root,
    }
    head = json.dumps(header, separators=(",", ":")).encode("ascii")
    return b"".join([struct.pack("<I", len(head)), head, *(data for _, data in writer.buffers)])


_BY_TYPE = {type(None): NULL, int: INT, float: FLOAT, str: STR, list: LIST, dict: DICT}


def _type_code(value: Any, path: str) -> int:
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


class _Writer:
    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.buffers: list[tuple[str, bytes]] = []
        self.arrays: list[Meta] = []
        self.seen: dict[bytes, tuple[int, int, int]] = {}
        # Integer arrays of the columns row-aligned with the one being written (same rows in
        # the same order): what a derived column can be predicted from. None: not aligned.
        self.scope: list[tuple[int, IntArray]] | None = None

    def buffer(self, array: npt.NDArray[Any]) -> list[Any]:
        """A reference to ``array`` stored as the next buffer."""
        dtype = array.dtype.str
        self.buffers.append((dtype, array.tobytes()))
        return [len(self.buffers) - 1, dtype]

    def column(
        self, values: Sequence[Any], path: str, scope: list[tuple[int, IntArray]] | None = None
    ) -> Meta:
        """Write a column; ``scope``: integer arrays of earlier columns aligned with it."""
        fast: list[Any] = list(map(_BY_TYPE.get, map(type, values)))
        codes: list[int] = fast
        if None in fast:  # booleans, subclasses, and values that are not JSON
            codes = [
                _type_code(v, path) if c is None else c for v, c in zip(values, fast, strict=True)
            ]
        meta: Meta = {"n": len(values)}
        present = sorted(set(codes))
        if len(present) == 1:
            meta["type"] = present[0]
        else:
            meta["types"] = self.buffer(np.array(codes, dtype=np.uint8))
        for code in present:
            chosen = (
                values
                if len(present) == 1
                else [v for v, c in zip(values, codes, strict=True) if c == code]
            )
            encode = self._ENCODERS.get(code)
            if encode is not None:
                outer, self.scope = self.scope, scope if len(present) == 1 else None
                try:
                    meta[str(code)] = encode(self, chosen, path)
                finally:
                    self.scope = outer
        return meta

    def ints(self, values: Sequence[Any], path: str) -> Meta:
        try:
            array = np.array([int(v) for v in values], dtype=np.int64)
        except OverflowError:
            return {"decimal": self.ints_of(self.string_ids(str(int(v)) for v in values))}
        scope = self.scope
        number = self.ints_of(array, scope, (100,))
        if scope is not None:
            scope.append((number, array))
        return {"ints": number}

    def ints_of(
        self,
        array: npt.NDArray[Any],
        scope: list[tuple[int, IntArray]] | None = None,
        factors: tuple[int, ...] = (),
    ) -> int:
        """Store an integer array; its number in the header's ``arrays``.

        An array that is an earlier one times a factor plus a constant (a weighted score is
        the normalized one times the weight; LoadAware's estimated usage is the measured one
        plus the incoming pod's) refers to it; an array of few distinct values stores codes
        into them; any other stores ``(value - base) / step`` in the smallest dtype. Before
        that, an array of many values that a ratio of two arrays in ``scope`` predicts (a
        percentage of allocatable) stores only what the prediction misses (:func:`_predict`).
        """
        array = array.astype(np.int64)
        meta: Meta | None = None
        shape = _linear_shape(array) if len(array) and np.abs(array).max() < _SAFE else None
        if shape is not None:
            meta = self.like(*shape)
        if meta is None and scope and len(array) >= _PREDICT_MIN_ROWS and _varied(array):
            meta = self.predicted(array, scope, factors)
        if meta is None:
            distinct = np.unique(array)
            if len(distinct) <= _FEW_DISTINCT and 2 * len(distinct) < len(array):
                codes = np.searchsorted(distinct, array)
                meta = {"values": self.steps(distinct), "codes": self.buffer(_narrow(codes))}
            else:
                meta = self.steps(array)
        self.arrays.append(meta)
        number = len(self.arrays) - 1
        if shape is not None and "like" not in meta:
            key, first, step = shape
            self.seen[key] = (number, first, step)
        return number

    def like(self, key: bytes, first: int, step: int) -> Meta | None:
        """An earlier array of the same linear shape, as ``(earlier - from) / div * times +
        plus`` (None when there is none)."""
        earlier = self.seen.get(key)
        if earlier is None:
            return None
        number, base, divisor = earlier
        return {"like": number, "from": base, "div": divisor, "times": step, "plus": first}

    def predicted(
        self, array: IntArray, scope: list[tuple[int, IntArray]], factors: tuple[int, ...]
    ) -> Meta | None:
        """``array`` as :func:`_predict` of earlier arrays plus a residual, when some prediction
        leaves a residual of at most a quarter of the array's entropy: a ratio of two arrays in
        ``scope`` (a percentage of allocatable, the share left free)."""
        usable = [
            (number, other)
            for number, other in scope
            if len(other) == len(array) and np.abs(other).max() < _PREDICT_LIMIT
        ]
        constants = [(n, a) for n, a in usable if a[0] == a.min() == a.max()]
        if not factors or len(usable) < 2:
            return None
        budget = _entropy(array) / 4
        best: tuple[float, Meta] | None = None
        for form, a, b, k, factor in _predictions(array, usable, constants, factors):
            numerator = usable[a][1] if k is None else usable[a][1] + constants[k][1]
            residual = array - _predict(form, numerator, usable[b][1], factor)
            cost = _entropy(residual)
            if cost <= budget and (best is None or cost < best[0]):
                meta: Meta = {
                    "predict": form,
                    "a": usable[a][0],
                    "b": usable[b][0],
                    "times": factor,
                    "residual": residual,
                }
                if k is not None:
                    meta["k"] = constants[k][0]
                best = (cost, meta)
        if best is None:
            return None
        meta = best[1]
        meta["residual"] = self.ints_of(meta["residual"])
        return meta

    def steps(self, array: IntArray) -> Meta:
        """``array`` as a base, a step, and ``(value - base) // step`` in the smallest dtype."""
        if len(array) == 0 or np.abs(array).max() >= _SAFE:
            return {"base": 0, "step": 1, "plain": self.buffer(_narrow(array))}
        base = int(array.min())
        offsets = array - base
        step = int(np.gcd.reduce(offsets)) or 1
        return {"base": base, "step": step, "plain": self.buffer(_narrow(offsets // step))}

    def floats(self, values: Sequence[Any], path: str) -> Meta:
        array = np.array([float(v) for v in values], dtype=np.float64)
        scale = _decimal_scale(array)
        if scale is None:
            return {"float64": self.buffer(array)}
        scaled = np.round(array * 10.0**scale).astype(np.int64)
        factors = (10**scale, 100 * 10**scale)
        return {"scale": scale, "ints": self.ints_of(scaled, self.scope, factors)}

    def strs(self, values: Sequence[Any], path: str) -> Meta:
        texts = [str(v) for v in values]
        distinct = set(texts)
        if len(distinct) > _TEMPLATE_MIN_DISTINCT and not any(_HOLE in s for s in distinct):
            templates = [_NUMBER.sub(_HOLE, s) for s in texts]
            if 2 * len(set(templates)) <= len(distinct):
                numbers = [[int(n) for n in _NUMBER.findall(s)] for s in texts]
                return {
                    "templates": self.ints_of(self.string_ids(templates)),
                    "numbers": self.column(numbers, f"{path}#"),
                }
        return {"ids": self.ints_of(self.string_ids(texts))}

    def string_ids(self, texts: Iterator[str] | Sequence[str]) -> npt.NDArray[np.int64]:
        table = self.strings
        return np.array([table.setdefault(s, len(table)) for s in texts], dtype=np.int64)

    def lists(self, values: Sequence[Any], path: str) -> Meta:
        lengths = np.array([len(v) for v in values], dtype=np.int64)
        longest = int(lengths.max()) if len(values) else 0
        meta: Meta = {"lengths": self.ints_of(lengths)}
        if 1 < longest <= _MAX_POSITIONS and len(values) > 1:
            meta["positions"] = [
                self.column([v[j] for v in values if len(v) > j], f"{path}[{j}]")
                for j in range(longest)
            ]
        else:
            meta["items"] = self.column([item for v in values for item in v], f"{path}[]")
        return meta

    def dicts(self, values: Sequence[Any], path: str) -> Meta:
        every_keys = list(map(tuple, values))
        shapes: dict[tuple[str, ...], int] = {}
        for keys in dict.fromkeys(every_keys):  # distinct, in order of appearance
            bad = next((k for k in keys if not isinstance(k, str)), None)
            if bad is not None:
                raise ColumnarError(f"{path}: key {bad!r} is not a string")
            shapes[keys] = len(shapes)
        children: dict[str, list[Any]] = {}
        if len(shapes) == 1:  # the common case, column by column
            [keys] = shapes
            columns = zip(*(value.values() for value in values), strict=True) if keys else ()
            children = dict(zip(keys, map(list, columns), strict=True))
        else:
            for value in values:
                for key, item in value.items():
                    children.setdefault(key, []).append(item)
        # Fields every row has are aligned with this column (and with its aligned ancestors).
        aligned = self.scope if self.scope is not None else []
        everywhere = {key for key in children if all(key in keys for keys in shapes)}
        meta: Meta = {
            "shapes": [list(keys) for keys in shapes],
            "fields": [
                [key, self.column(items, f"{path}.{key}", aligned if key in everywhere else None)]
                for key, items in children.items()
            ],
        }
        if len(shapes) > 1:
            codes = np.fromiter(map(shapes.__getitem__, every_keys), np.int64, len(every_keys))
            meta["shape"] = self.ints_of(codes)
        return meta

    _ENCODERS: dict[int, Callable[[_Writer, Sequence[Any], str], Meta]] = {
        INT: ints,
        FLOAT: floats,
        STR: strs,
        LIST: lists,
        DICT: dicts,
    }


def _narrow(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``array`` in the smallest integer dtype that holds its values."""
    if len(array) == 0:
        return array.astype(np.uint8)
    low, high = int(array.min()), int(array.max())
    for dtype in _DTYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return array.astype(dtype)
    return array.astype(np.int64)


def _decimal_scale(array: npt.NDArray[np.float64]) -> int | None:
    """The fewest decimal places that give every value back exactly (sign of zero included),
    or None (NaN, infinities, long fractions)."""
    if not np.isfinite(array).all():
        return None
    for scale in range(_MAX_SCALE + 1):
        factor = 10.0**scale
        scaled = np.round(array * factor)
        if (np.abs(scaled) >= _EXACT_FLOAT).any():
            return None
        back = scaled.astype(np.int64).astype(np.float64) / factor
        if np.array_equal(back, array) and np.array_equal(np.signbit(back), np.signbit(array)):
            return scale
    return None


def _linear_shape(array: IntArray) -> tuple[bytes, int, int] | None:
    """``array`` as ``first + step * shape`` with the smallest shape whose first change is
    upwards: arrays with the same shape are linear images of each other. None: constant."""
    first = int(array[0])
    moved = array - first
    step = int(np.gcd.reduce(np.abs(moved)))
    if step == 0:
        return None  # constant: its codes cost next to nothing
    if moved[np.flatnonzero(moved)[0]] < 0:
        step = -step
    return (moved // step).tobytes(), first, step


def _varied(array: IntArray) -> bool:
    """Whether ``array`` has enough distinct values (among its first rows) to be worth
    predicting."""
    return len(np.unique(array[:_SAMPLE])) >= _PREDICT_MIN_DISTINCT


def _predict(form: str, a: IntArray, b: IntArray, factor: int) -> IntArray:
    """A derived column's prediction from two others: ``ratio`` is ``a * factor // b`` (a
    percentage of allocatable), ``rest`` is ``(b - a) * factor // b`` (the free share); 0 where
    ``b`` is 0. Part of the format: reading computes the same."""
    top = a if form == "ratio" else b - a
    safe = np.where(b == 0, 1, b)
    predicted: IntArray = np.where(b == 0, 0, (top * factor) // safe)
    return predicted


def _entropy(array: IntArray) -> float:
    """Bits to code ``array`` value by value (order-0 entropy times length)."""
    _, counts = np.unique(array, return_counts=True)
    shares = counts / len(array)
    return float(-(counts * np.log2(shares)).sum())


def _predictions(
    array: IntArray,
    usable: list[tuple[int, IntArray]],
    constants: list[tuple[int, IntArray]],
    factors: tuple[int, ...],
) -> Iterator[tuple[str, int, int, int | None, int]]:
    """(form, a, b, k, factor) whose prediction is within 1 of ``array`` on its first rows:
    ``a`` and ``b`` index ``usable``, ``k`` (an optional constant added to ``a``) indexes
    ``constants``."""
    sample = array[:_SAMPLE]
    rows = np.stack([other[:_SAMPLE] for _, other in usable])
    added = [None, *range(len(constants))]
    for factor in factors:
        if factor > _MAX_FACTOR:
            continue
        for k in added:
            tops = rows if k is None else rows + constants[k][1][:_SAMPLE]
            for form in ("ratio", "rest"):
                numerators = tops[:, None, :] if form == "ratio" else rows[None] - tops[:, None]
                safe = np.where(rows == 0, 1, rows)[None]
                guess = np.where(rows[None] == 0, 0, (numerators * factor) // safe)
                close = np.abs(guess - sample).max(axis=2) <= 1
                for a, b in zip(*np.nonzero(close), strict=True):
                    if a != b:
                        yield form, int(a), int(b), k, factor


# -- reading ------------------------------------------------------------------------------------


def unpack(data: bytes) -> Column:
    """The root column of :func:`pack`'s bytes; :class:`ColumnarError` when they are not that."""
    try:
        (size,) = struct.unpack_from("<I", data)
        header = json.loads(bytes(data[4 : 4 + size]))
        if header.get("format") != FORMAT:
            raise ColumnarError(f"unknown columns format {header.get('format')!r}")
        buffers = []
        offset = 4 + size
        for dtype, length in header["buffers"]:
            buffers.append(
                np.frombuffer(
                    data,
                    dtype=np.dtype(dtype),
                    count=length // np.dtype(dtype).itemsize,
                    offset=offset,
                )
            )
            offset += length
        if offset != len(data):
            raise ColumnarError("columns: trailing or missing bytes")
        return Column(header["root"], _Store(header["strings"], buffers, header["arrays"]))
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, ColumnarError):
            raise
        raise ColumnarError(f"not packed columns: {exc}") from None


class _Store:
    def __init__(self, strings: list[str], buffers: list[npt.NDArray[Any]], arrays: list[Meta]):
        self.strings = strings
        self.buffers = buffers
        self.arrays = arrays
        self._ints: dict[int, IntArray] = {}

    def ints(self, number: int) -> IntArray:
        """Integer array ``number`` of the header's ``arrays`` (decoded once)."""
        array = self._ints.get(number)
        if array is None:
            meta = self.arrays[number]
            if "like" in meta:
                if not 0 <= meta["like"] < number:
                    raise ColumnarError(f"array {number} refers to a later array")
                moved = (self.ints(meta["like"]) - meta["from"]) // meta["div"]
                array = moved * meta["times"] + meta["plus"]
            elif "predict" in meta:
                array = self.prediction(number, meta)
            elif "codes" in meta:
                array = self.steps(meta["values"])[self.buffers[meta["codes"][0]]]
            else:
                array = self.steps(meta)
            self._ints[number] = array
        return array

    def prediction(self, number: int, meta: Meta) -> IntArray:
        """A derived array: :func:`_predict` of earlier arrays plus its residual."""
        operands = [meta["a"], meta["b"], meta["residual"], meta.get("k", 0)]
        if not all(0 <= n < number for n in operands):
            raise ColumnarError(f"array {number} refers to a later array")
        top = self.ints(meta["a"])
        if "k" in meta:
            top = top + self.ints(meta["k"])
        guess = _predict(meta["predict"], top, self.ints(meta["b"]), meta["times"])
        return guess + self.ints(meta["residual"])

    def steps(self, meta: Meta) -> IntArray:
        offsets: IntArray = self.buffers[meta["plain"][0]].astype(np.int64)
        values: IntArray = offsets * meta["step"] + meta["base"]
        return values


def _rank(mask: npt.NDArray[np.bool_]) -> IntArray:
    """For each row, how many rows before it have ``mask`` set."""
    ranks: IntArray = np.cumsum(mask, dtype=np.int64) - mask
    return ranks


def _rows(rows: Sequence[int] | npt.NDArray[Any] | None, count: int) -> IntArray:
    if rows is None:
        return np.arange(count, dtype=np.int64)
    array = np.asarray(rows, dtype=np.int64)
    if len(array) and (array.min() < 0 or array.max() >= count):
        raise IndexError(f"rows out of range 0..{count - 1}")
    return array


class Column:
    """A packed column: ``take(rows)`` rebuilds those rows' values, in the order asked."""

    def __init__(self, meta: Meta, store: _Store) -> None:
        self.meta = meta
        self.store = store
        self._types: npt.NDArray[np.uint8] | None = None
        self._parts: dict[int, _Part] = {}
        self._ranks: dict[int, IntArray] = {}

    def __len__(self) -> int:
        count: int = self.meta["n"]
        return count

    def take(self, rows: Sequence[int] | npt.NDArray[Any] | None = None) -> list[Any]:
        """The values of ``rows`` (default: every row)."""
        with _no_cyclic_gc():
            return self._take(rows)

    def _take(self, rows: Sequence[int] | npt.NDArray[Any] | None) -> list[Any]:
        wanted = _rows(rows, len(self))
        if "type" in self.meta:
            return self._part(self.meta["type"]).take(wanted)
        types = self.types()[wanted]
        out: list[Any] = [None] * len(wanted)
        for code in np.unique(types).tolist():
            where = np.flatnonzero(types == code)
            values = self._part(code).take(self.ranks(code)[wanted[where]])
            for position, value in zip(where.tolist(), values, strict=True):
                out[position] = value
        return out

    def types(self) -> npt.NDArray[np.uint8]:
        if self._types is None:
            if "type" in self.meta:
                self._types = np.full(len(self), self.meta["type"], dtype=np.uint8)
            else:
                self._types = self.store.buffers[self.meta["types"][0]]
        return self._types

    def ranks(self, code: int) -> IntArray:
        """Row → position among the rows of type ``code``."""
        if code not in self._ranks:
            self._ranks[code] = _rank(self.types() == code)
        return self._ranks[code]

    def field(self, key: str, rows: Sequence[int] | npt.NDArray[Any] | None = None) -> list[Any]:
        """Key ``key`` of each row that is a dict (None where a row is not or lacks it)."""
        wanted = _rows(rows, len(self))
        out: list[Any] = [None] * len(wanted)
        if DICT not in self._present():
            return out
        where = np.flatnonzero(self.types()[wanted] == DICT)
        dicts = self._part(DICT)
        assert isinstance(dicts, _Dicts)
        values = dicts.field(key, self.ranks(DICT)[wanted[where]])
        for position, value in zip(where.tolist(), values, strict=True):
            out[position] = value
        return out

    def keys(self, row: int) -> list[str]:
        """The keys of row ``row``, in order ([] when it is not a dict)."""
        if int(self.types()[row]) != DICT:
            return []
        dicts = self._part(DICT)
        assert isinstance(dicts, _Dicts)
        return dicts.keys(int(self.ranks(DICT)[row]))

    def child(self, key: str) -> Column | None:
        """The column of key ``key`` when every row is a dict with that key (rows aligned)."""
        if self.meta.get("type") != DICT:
            return None
        dicts = self._part(DICT)
        assert isinstance(dicts, _Dicts)
        return dicts.child(key) if dicts.everywhere(key) else None

    def items(self) -> Column | None:
        """The column of the items of this column's one list (None: not one list)."""
        if self.meta.get("type") != LIST or len(self) != 1:
            return None
        lists = self._part(LIST)
        assert isinstance(lists, _Lists)
        return lists.items

    def _present(self) -> set[int]:
        if "type" in self.meta:
            return {self.meta["type"]}
        return {int(k) for k in self.meta if k.isdigit()}

    def _part(self, code: int) -> _Part:
        part = self._parts.get(code)
        if part is None:
            part = self._parts[code] = _PARTS[code](self.meta.get(str(code)), self.store)
        return part


class _Part:
    """The values of one JSON type in a column."""

    def __init__(self, meta: Meta | None, store: _Store) -> None:
        self.meta: Meta = meta or {}
        self.store = store

    def take(self, rows: IntArray) -> list[Any]:
        raise NotImplementedError


def _constant(value: Any) -> type[_Part]:
    class Constant(_Part):
        def take(self, rows: IntArray) -> list[Any]:
            return [value] * len(rows)

    return Constant


class _Ints(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        if "decimal" in self.meta:
            self.values = store.ints(self.meta["decimal"])
        else:
            self.values = store.ints(self.meta["ints"])

    def take(self, rows: IntArray) -> list[Any]:
        if "decimal" in self.meta:
            strings = self.store.strings
            return [int(strings[i]) for i in self.values[rows].tolist()]
        result: list[Any] = self.values[rows].tolist()
        return result


class _Floats(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        if "float64" in self.meta:
            self.values = store.buffers[self.meta["float64"][0]]
        else:
            factor = 10.0 ** self.meta["scale"]
            self.values = store.ints(self.meta["ints"]).astype(np.float64) / factor

    def take(self, rows: IntArray) -> list[Any]:
        result: list[Any] = self.values[rows].tolist()
        return result


class _Strs(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        self.templated = "templates" in self.meta
        self.ids = store.ints(self.meta["templates"] if self.templated else self.meta["ids"])
        self.numbers = Column(self.meta["numbers"], store) if self.templated else None

    def take(self, rows: IntArray) -> list[Any]:
        strings = self.store.strings
        texts = [strings[i] for i in self.ids[rows].tolist()]
        if self.numbers is None:
            return texts
        return [
            _fill(template, numbers)
            for template, numbers in zip(texts, self.numbers.take(rows), strict=True)
        ]


def _fill(template: str, numbers: list[int]) -> str:
    if not numbers:
        return template
    parts = template.split(_HOLE)
    out = [parts[0]]
    for number, part in zip(numbers, parts[1:], strict=True):
        out.append(str(number))
        out.append(part)
    return "".join(out)


class _Lists(_Part):
    """Lists: their lengths, and either one column of every item in order, or (short lists)
    one column per position: every list's first item, every list's second item, …"""

    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        self.lengths = store.ints(self.meta["lengths"])
        self.items = Column(self.meta["items"], store) if "items" in self.meta else None
        self.positions = [Column(m, store) for m in self.meta.get("positions", ())]
        self._position_ranks: dict[int, IntArray] = {}

    def take(self, rows: IntArray) -> list[Any]:
        lengths = self.lengths[rows]
        if self.items is None:
            return self._by_position(rows, lengths)
        firsts = np.cumsum(self.lengths) - self.lengths
        wanted = np.cumsum(lengths) - lengths
        offsets = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(wanted, lengths)
        values = self.items.take(np.repeat(firsts[rows], lengths) + offsets)
        out = []
        start = 0
        for length in lengths.tolist():
            out.append(values[start : start + length])
            start += length
        return out

    def _by_position(self, rows: IntArray, lengths: IntArray) -> list[Any]:
        out: list[list[Any]] = [[] for _ in range(len(rows))]
        for j in range(int(lengths.max()) if len(rows) else 0):
            where = np.flatnonzero(lengths > j)
            values = self.positions[j].take(self.position_ranks(j)[rows[where]])
            for position, value in zip(where.tolist(), values, strict=True):
                out[position].append(value)
        return out

    def position_ranks(self, j: int) -> IntArray:
        """Row → its item's row in position ``j``'s column."""
        if j not in self._position_ranks:
            self._position_ranks[j] = _rank(self.lengths > j)
        return self._position_ranks[j]


class _Dicts(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        self.shapes: list[list[str]] = self.meta["shapes"]
        count = len(self.shapes)
        self.codes = store.ints(self.meta["shape"]) if count > 1 else None
        self.children = {key: Column(child, store) for key, child in self.meta["fields"]}
        self._ranks: dict[str, IntArray] = {}

    def child(self, key: str) -> Column | None:
        return self.children.get(key)

    def keys(self, row: int) -> list[str]:
        return self.shapes[0 if self.codes is None else int(self.codes[row])]

    def everywhere(self, key: str) -> bool:
        """Whether every row has key ``key``."""
        return all(key in shape for shape in self.shapes)

    def key_ranks(self, key: str) -> IntArray | None:
        """Row → position in ``key``'s column (None: every row has the key, same position)."""
        if self.codes is None:
            return None
        if key not in self._ranks:
            has = np.array([key in shape for shape in self.shapes])
            self._ranks[key] = _rank(has[self.codes])
        return self._ranks[key]

    def _values(self, key: str, rows: IntArray) -> list[Any]:
        ranks = self.key_ranks(key)
        return self.children[key].take(rows if ranks is None else ranks[rows])

    def take(self, rows: IntArray) -> list[Any]:
        if self.codes is None or len(np.unique(self.codes[rows])) <= 1:
            keys = self.shapes[0 if self.codes is None or not len(rows) else self.codes[rows[0]]]
            if not keys:
                return [{} for _ in range(len(rows))]
            columns = [self._values(key, rows) for key in keys]
            return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]
        codes = self.codes[rows]
        iterators = {}
        for key in self.children:
            has = np.array([key in shape for shape in self.shapes])[codes]
            if has.any():
                iterators[key] = iter(self._values(key, rows[has]))
        return [{key: next(iterators[key]) for key in self.shapes[code]} for code in codes.tolist()]

    def field(self, key: str, rows: IntArray) -> list[Any]:
        if key not in self.children:
            return [None] * len(rows)
        if self.codes is None:
            return self.children[key].take(rows)
        has = np.array([key in shape for shape in self.shapes])[self.codes[rows]]
        values = iter(self._values(key, rows[has]))
        return [next(values) if present else None for present in has.tolist()]


_PARTS: dict[int, type[_Part]] = {
    NULL: _constant(None),
    FALSE: _constant(False),
    TRUE: _constant(True),
    INT: _Ints,
    FLOAT: _Floats,
    STR: _Strs,
    LIST: _Lists,
    DICT: _Dicts,
}
