"""Reading columns: :func:`unpack` and :class:`Column`, which rebuilds any rows."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.columnar.format import (
    DICT,
    FALSE,
    FLOAT,
    FORMAT,
    HOLE,
    INT,
    LIST,
    NULL,
    PAD_BASE,
    PADDED,
    STR,
    TRUE,
    ColumnarError,
    IntArray,
    Meta,
    no_cyclic_gc,
)
from scoring.columnar.predict import predict


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
            buffers.append(_buffer(data, np.dtype(dtype), offset, length))
            offset += length
        if offset != len(data):
            raise ColumnarError("columns: trailing or missing bytes")
        return Column(header["root"], _Store(header["strings"], buffers, header["arrays"]))
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, ColumnarError):
            raise
        raise ColumnarError(f"not packed columns: {exc}") from None


def _buffer(data: bytes, dtype: np.dtype[Any], offset: int, length: int) -> npt.NDArray[Any]:
    """One stored array (integers wider than a byte come byte plane by byte plane)."""
    if length % dtype.itemsize:
        raise ColumnarError("columns: a buffer does not hold whole values")
    count = length // dtype.itemsize
    if dtype.kind in "iu" and dtype.itemsize > 1:
        planes = np.frombuffer(data, np.uint8, count=length, offset=offset)
        return planes.reshape(dtype.itemsize, count).T.copy().view(dtype).reshape(count)
    return np.frombuffer(data, dtype, count=count, offset=offset)


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
        """A derived array: :func:`predict` of earlier arrays plus its residual."""
        operands = [meta["a"], meta["b"], meta["residual"], meta.get("k", 0)]
        if not all(0 <= n < number for n in operands):
            raise ColumnarError(f"array {number} refers to a later array")
        top = self.ints(meta["a"])
        if "k" in meta:
            top = top + self.ints(meta["k"])
        guess = predict(meta["predict"], top, self.ints(meta["b"]), meta["times"])
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
        with no_cyclic_gc():
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


_HOLES = re.compile(f"({HOLE}|{PADDED}.)", re.DOTALL)


def _fill(template: str, numbers: list[int]) -> str:
    """The string a template and its numbers stand for."""
    if not numbers:
        return template
    parts = _HOLES.split(template)
    out = [parts[0]]
    for number, hole, part in zip(numbers, parts[1::2], parts[2::2], strict=True):
        digits = str(number)
        out.append(digits if hole == HOLE else digits.zfill(ord(hole[1]) - PAD_BASE))
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
