"""Writing columns: :func:`pack` (the layout is described in :mod:`scoring.columnar`)."""

from __future__ import annotations

import functools
import json
import re
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.columnar import predict
from scoring.columnar.format import (
    DICT,
    FLOAT,
    FORMAT,
    HOLE,
    INT,
    LIST,
    NULL,
    PAD_BASE,
    PADDED,
    SAFE,
    STR,
    ColumnarError,
    IntArray,
    Meta,
    no_cyclic_gc,
    type_code,
)
from scoring.columnar.values import Lists, Plain, Records, Table, Values

_DTYPES = ("u1", "i1", "u2", "i2", "u4", "i4", "i8")
_FEW_DISTINCT = 256  # integer columns with at most this many distinct values store codes
_MAX_SCALE = 9  # decimal places tried for floats
_EXACT_FLOAT = 2.0**53
# Lists up to this long store items position by position (first items, second items, …).
LIST_POSITIONS = 64
# A string column is stored as templates when it has more distinct strings than this and
# templates at most halve them.
_TEMPLATE_MIN_DISTINCT = 16
# A number inside a string (at most 18 digits: it fits in 64 bits); split on, it is kept.
_NUMBER = re.compile(r"([0-9]{1,18})")


def pack(values: Column) -> bytes:
    """``values`` as packed columns (uncompressed; see the module docstring)."""
    writer = _Writer()
    with no_cyclic_gc():
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


# A column's rows: Python values, or values given by column.
Column = Sequence[Any] | Values

_BY_TYPE = {type(None): NULL, int: INT, float: FLOAT, str: STR, list: LIST, dict: DICT}


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
        """A reference to ``array`` stored as the next buffer (integers wider than a byte byte
        plane by byte plane: the high bytes of similar numbers then compress together)."""
        dtype = array.dtype.str
        if array.dtype.kind in "iu" and array.dtype.itemsize > 1:
            data = np.ascontiguousarray(array).view(np.uint8).reshape(-1, array.dtype.itemsize)
            self.buffers.append((dtype, data.T.tobytes()))
        else:
            self.buffers.append((dtype, array.tobytes()))
        return [len(self.buffers) - 1, dtype]

    def column(
        self, values: Column, path: str, scope: list[tuple[int, IntArray]] | None = None
    ) -> Meta:
        """Write a column; ``scope``: integer arrays of earlier columns aligned with it."""
        if isinstance(values, Plain):
            values = values.items
        if isinstance(values, Values):
            return self._column(values, values.codes(), values.part, scope, path)
        fast: list[Any] = list(map(_BY_TYPE.get, map(type, values)))
        codes: list[int] = fast
        if None in fast:  # booleans, subclasses, and values that are not JSON
            codes = [
                type_code(v, path) if c is None else c for v, c in zip(values, fast, strict=True)
            ]
        rows = values

        def part(code: int) -> Column:
            return [v for v, c in zip(rows, codes, strict=True) if c == code]

        return self._column(values, codes, part, scope, path)

    def _column(
        self,
        values: Column,
        codes: Sequence[int] | npt.NDArray[np.uint8],
        part: Callable[[int], Column],
        scope: list[tuple[int, IntArray]] | None,
        path: str = "$",
    ) -> Meta:
        meta: Meta = {"n": len(values)}
        if isinstance(codes, np.ndarray):  # counted: a set of 5,000 codes costs ten times more
            present = np.flatnonzero(np.bincount(codes)).tolist() if len(codes) else []
        else:
            present = sorted(set(codes))
        if len(present) == 1:
            meta["type"] = present[0]
        else:
            meta["types"] = self.buffer(np.array(codes, dtype=np.uint8))
        for code in present:
            encode = self._ENCODERS.get(code)
            if encode is not None:
                chosen = values if len(present) == 1 else part(code)
                outer, self.scope = self.scope, scope if len(present) == 1 else None
                try:
                    meta[str(code)] = encode(self, chosen, path)
                finally:
                    self.scope = outer
        return meta

    def ints(self, values: Column, path: str) -> Meta:
        given = values.ints() if isinstance(values, Values) else None
        rows: Sequence[Any] = values if not isinstance(values, Values) else []
        if isinstance(values, Values) and given is None:
            rows = values.tolist()
        try:
            array = given if given is not None else np.array([int(v) for v in rows], np.int64)
        except OverflowError:
            return {"decimal": self.ints_of(self.string_ids(str(int(v)) for v in rows))}
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
        percentage of allocatable) stores only what the prediction misses (:func:`predict.predict`).
        """
        array = array.astype(np.int64)
        meta: Meta | None = None
        shape = predict.linear_shape(array) if len(array) and np.abs(array).max() < SAFE else None
        if shape is not None:
            meta = self.like(*shape)
        if meta is None and scope and len(array) >= predict.MIN_ROWS and predict.varied(array):
            meta = self.predicted(array, scope, factors)
        if meta is None:
            distinct = _distinct(array) if len(array) else array
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
        """``array`` as a prediction from two arrays of ``scope`` plus a residual, when that
        residual has at most a quarter of the array's entropy (:func:`predict.predict`: a
        percentage of allocatable, the share left free)."""
        usable = [
            (number, other)
            for number, other in scope
            if len(other) == len(array) and np.abs(other).max() < predict.LIMIT
        ]
        # Constants added to a numerator (the incoming pod's limit): one per distinct value.
        by_value = {int(a[0]): (n, a) for n, a in usable if a[0] == a.min() == a.max() != 0}
        constants = list(by_value.values())
        if not factors or len(usable) < 2:
            return None
        budget = predict.entropy(array) / 4
        best: tuple[float, Meta] | None = None
        for form, a, b, k, factor in predict.predictions(array, usable, constants, factors):
            numerator = usable[a][1] if k is None else usable[a][1] + constants[k][1]
            residual = array - predict.predict(form, numerator, usable[b][1], factor)
            cost = predict.entropy(residual)
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
        if len(array) == 0 or np.abs(array).max() >= SAFE:
            return {"base": 0, "step": 1, "plain": self.buffer(_narrow(array))}
        base = int(array.min())
        offsets = array - base
        step = int(np.gcd.reduce(offsets)) or 1
        return {"base": base, "step": step, "plain": self.buffer(_narrow(offsets // step))}

    def floats(self, values: Column, path: str) -> Meta:
        if isinstance(values, Values):
            array = values.floats()
        else:
            array = np.array([float(v) for v in values], dtype=np.float64)
        scale = _decimal_scale(array)
        if scale is None:
            return {"float64": self.buffer(array)}
        scaled = np.round(array * 10.0**scale).astype(np.int64)
        factors = (10**scale, 100 * 10**scale)
        return {"scale": scale, "ints": self.ints_of(scaled, self.scope, factors)}

    def strs(self, values: Column, path: str) -> Meta:
        if isinstance(values, Values):
            return self.table_strs(*values.strings(), path)
        texts = [str(v) for v in values]
        distinct = set(texts)
        if len(distinct) > _TEMPLATE_MIN_DISTINCT and not any(
            HOLE in s or PADDED in s for s in distinct
        ):
            shaped = list(map(_shape_at(path), texts))
            templates = [template for template, _ in shaped]
            if 2 * len(set(templates)) <= len(distinct):
                numbers = [list(numbers) for _, numbers in shaped]
                return {
                    "templates": self.ints_of(self.string_ids(templates)),
                    "numbers": self.column(numbers, f"{path}#"),
                }
        return {"ids": self.ints_of(self.string_ids(texts))}

    def table_strs(self, table: list[str], ids: IntArray, path: str) -> Meta:
        """:meth:`strs` of the rows ``table[ids]`` (``table``: distinct strings)."""
        used = np.unique(ids)
        if len(used) > _TEMPLATE_MIN_DISTINCT and not any(
            HOLE in table[i] or PADDED in table[i] for i in used.tolist()
        ):
            shaped = list(map(_shape_at(path), table))
            kinds: dict[str, int] = {}
            kind_of = np.array(
                [kinds.setdefault(template, len(kinds)) for template, _ in shaped], dtype=np.int64
            )
            if 2 * len(np.unique(kind_of[used])) <= len(used):
                numbers = [list(numbers) for _, numbers in shaped]
                return {
                    "templates": self.ints_of(self.table_ids(list(kinds), kind_of[ids])),
                    "numbers": self.column(Table(ids, numbers), f"{path}#"),
                }
        return {"ids": self.ints_of(self.table_ids(table, ids))}

    def table_ids(self, table: list[str], ids: IntArray) -> IntArray:
        """:meth:`string_ids` of the rows ``table[ids]``: strings numbered in order of first
        appearance."""
        if not len(ids):
            return ids
        used, first = np.unique(ids, return_index=True)
        number = np.zeros(len(table), dtype=np.int64)
        strings = self.strings
        for index in used[np.argsort(first)].tolist():
            number[index] = strings.setdefault(table[index], len(strings))
        result: IntArray = number[ids]
        return result

    def string_ids(self, texts: Iterator[str] | Sequence[str]) -> npt.NDArray[np.int64]:
        table = self.strings
        return np.array([table.setdefault(s, len(table)) for s in texts], dtype=np.int64)

    def lists(self, values: Column, path: str) -> Meta:
        if isinstance(values, Values):
            return self.columns_lists(values.lists(), path)
        lengths = np.array([len(v) for v in values], dtype=np.int64)
        longest = int(lengths.max()) if len(values) else 0
        meta: Meta = {"lengths": self.ints_of(lengths)}
        if 1 < longest <= LIST_POSITIONS and len(values) > 1:
            meta["positions"] = [
                self.column([v[j] for v in values if len(v) > j], f"{path}[{j}]")
                for j in range(longest)
            ]
        else:
            meta["items"] = self.column([item for v in values for item in v], f"{path}[]")
        return meta

    def columns_lists(self, values: Lists, path: str) -> Meta:
        """:meth:`lists` of lists given by column."""
        lengths = values.lengths
        longest = int(lengths.max()) if len(values) else 0
        meta: Meta = {"lengths": self.ints_of(lengths)}
        if 1 < longest <= LIST_POSITIONS and len(values) > 1:
            meta["positions"] = [
                self.column(values.position(j), f"{path}[{j}]") for j in range(longest)
            ]
        else:
            meta["items"] = self.column(values.items(), f"{path}[]")
        return meta

    def dicts(self, values: Column, path: str) -> Meta:
        if isinstance(values, Values):
            return self.columns_dicts(values.records(), path)
        every_keys = list(map(tuple, values))
        shapes: dict[tuple[str, ...], int] = {}
        for keys in dict.fromkeys(every_keys):  # distinct, in order of appearance
            shapes[keys] = len(shapes)
        children: dict[str, Column] = {}
        if len(shapes) == 1:  # the common case, column by column
            [keys] = shapes
            columns = zip(*(value.values() for value in values), strict=True) if keys else ()
            children = dict(zip(keys, map(list, columns), strict=True))
        else:
            union = dict.fromkeys(key for keys in shapes for key in keys)
            children = {key: [v[key] for v in values if key in v] for key in union}
        codes = None
        if len(shapes) > 1:
            codes = np.fromiter(map(shapes.__getitem__, every_keys), np.int64, len(every_keys))
        return self.dict_meta(list(shapes), codes, children, path)

    def columns_dicts(self, values: Records, path: str) -> Meta:
        """:meth:`dicts` of dicts given by column."""
        codes = values.shape_codes
        used, first = np.unique(codes, return_index=True)
        order = used[np.argsort(first)].tolist()  # shapes in order of appearance
        shapes = [values.shapes[k] for k in order]
        renumber = np.zeros(len(values.shapes), dtype=np.int64)
        renumber[order] = np.arange(len(order))
        union = dict.fromkeys(key for keys in shapes for key in keys)
        children: dict[str, Column] = {key: values.fields[key] for key in union}
        return self.dict_meta(shapes, renumber[codes] if len(shapes) > 1 else None, children, path)

    def dict_meta(
        self,
        shapes: list[tuple[str, ...]],
        codes: IntArray | None,
        children: dict[str, Column],
        path: str,
    ) -> Meta:
        """Dicts of ``shapes`` (in order of appearance; ``codes``: each row's, when several)
        with ``children``, each key's column over the rows that have it."""
        for keys in shapes:
            bad = next((k for k in keys if not isinstance(k, str)), None)
            if bad is not None:
                raise ColumnarError(f"{path}: key {bad!r} is not a string")
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
        if codes is not None:
            meta["shape"] = self.ints_of(codes)
        return meta

    _ENCODERS: dict[int, Callable[[_Writer, Column, str], Meta]] = {
        INT: ints,
        FLOAT: floats,
        STR: strs,
        LIST: lists,
        DICT: dicts,
    }


def _shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``text``'s template (numbers as holes) and its numbers."""
    parts = _NUMBER.split(text)
    if len(parts) == 1:
        return text, ()
    numbers = parts[1::2]
    parts[1::2] = map(_hole, numbers)
    return "".join(parts), tuple(map(int, numbers))


# Names (a cluster's node names) come back in every explanation of the cluster: their shapes
# are remembered. Other strings (LoadAware's per-node summaries) are new in every explanation;
# remembering those too pinned memory the process never got back (docs/benchmarks.md).
_named_shape = functools.lru_cache(maxsize=1 << 16)(_shape)


def _shape_at(path: str) -> Callable[[str], tuple[str, tuple[int, ...]]]:
    return _named_shape if path.endswith(".name") else _shape


def _distinct(array: IntArray) -> IntArray:
    """``np.unique(array)``, by counting when the values span a short range (most columns:
    scores, codes, percentages), which costs a fraction of hashing them."""
    low, high = int(array.min()), int(array.max())
    if high - low > 4 * len(array) + 1024:
        return np.unique(array)
    present: IntArray = np.flatnonzero(np.bincount(array - low)) + low
    return present


def _hole(digits: str) -> str:
    """A number's place in a template: its width too when it is zero-padded ("0957")."""
    if len(digits) == 1 or digits[0] != "0":
        return HOLE
    return PADDED + chr(PAD_BASE + len(digits))


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
