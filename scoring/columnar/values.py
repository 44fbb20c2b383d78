"""Values given to :func:`scoring.columnar.pack_values` already as columns.

A decision's 5,000 nodes are arrays in the engine (one per plugin); building one dict per node
only for :func:`scoring.columnar.pack` to take them apart again costs seconds. These classes
describe the same rows by column, and the writer stores them exactly as it would store the rows
they stand for (same bytes): :class:`Records` (dicts), :class:`Lists`, :class:`Ints`,
:class:`Floats`, :class:`Bools`, :class:`Table` (each row one of a few Python values, by
index), :class:`Mixed` (rows of several JSON types) and :class:`Plain` (a list of Python values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.columnar.format import (
    DICT,
    FALSE,
    FLOAT,
    INT,
    LIST,
    NULL,
    TRUE,
    IntArray,
    type_code,
)

Codes = npt.NDArray[np.uint8]


class Values:
    """Rows of JSON values, by column."""

    def __len__(self) -> int:
        raise NotImplementedError

    def codes(self) -> Codes:
        """Each row's JSON type code (``scoring.columnar.format``)."""
        raise NotImplementedError

    def part(self, code: int) -> Values:
        """The rows of type ``code``, in order."""
        raise NotImplementedError

    def tolist(self) -> list[Any]:
        """The rows as Python values."""
        raise NotImplementedError

    def ints(self) -> IntArray | None:
        """Rows that are all integers as an array (None: some do not fit 64 bits)."""
        try:
            return np.array([int(v) for v in self.tolist()], dtype=np.int64)
        except OverflowError:
            return None

    def floats(self) -> npt.NDArray[np.float64]:
        return np.array([float(v) for v in self.tolist()], dtype=np.float64)

    def strings(self) -> tuple[list[str], IntArray]:
        """Rows that are all strings as distinct strings and each row's index into them."""
        table: dict[str, int] = {}
        ids = [table.setdefault(str(v), len(table)) for v in self.tolist()]
        return list(table), np.array(ids, dtype=np.int64)

    def records(self) -> Records:
        """Rows that are all dicts, by key."""
        return Records.of_rows(self.tolist())

    def lists(self) -> Lists:
        """Rows that are all lists, by position."""
        return Lists.of_rows(self.tolist())


class Plain(Values):
    """Python values, stored as :func:`scoring.columnar.pack` stores a list of them."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = list(items)

    def __len__(self) -> int:
        return len(self.items)

    def codes(self) -> Codes:
        return np.array([type_code(v, "$") for v in self.items], dtype=np.uint8)

    def part(self, code: int) -> Values:
        return Plain([v for v in self.items if type_code(v, "$") == code])

    def tolist(self) -> list[Any]:
        return self.items


class _Uniform(Values):
    """Rows of one JSON type."""

    code: int

    def codes(self) -> Codes:
        return np.full(len(self), self.code, dtype=np.uint8)

    def part(self, code: int) -> Values:
        return self if code == self.code else Plain([])


class Ints(_Uniform):
    code = INT

    def __init__(self, array: npt.NDArray[Any]) -> None:
        self.array = np.asarray(array, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.array)

    def tolist(self) -> list[Any]:
        values: list[Any] = self.array.tolist()
        return values

    def ints(self) -> IntArray:
        return self.array


class Floats(_Uniform):
    code = FLOAT

    def __init__(self, array: npt.NDArray[Any]) -> None:
        self.array = np.asarray(array, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.array)

    def tolist(self) -> list[Any]:
        values: list[Any] = self.array.tolist()
        return values

    def floats(self) -> npt.NDArray[np.float64]:
        return self.array


class Bools(Values):
    def __init__(self, mask: npt.NDArray[Any]) -> None:
        self.mask = np.asarray(mask, dtype=bool)

    def __len__(self) -> int:
        return len(self.mask)

    def codes(self) -> Codes:
        return np.where(self.mask, TRUE, FALSE).astype(np.uint8)

    def part(self, code: int) -> Values:
        return Bools(self.mask[self.mask == (code == TRUE)])

    def tolist(self) -> list[Any]:
        values: list[Any] = self.mask.tolist()
        return values


class Table(Values):
    """Row ``r`` is ``table[ids[r]]`` (a column of a few distinct values: a status per node)."""

    def __init__(self, ids: npt.NDArray[Any], table: Sequence[Any]) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.table = list(table)
        self._codes = np.array([type_code(v, "$") for v in self.table], dtype=np.uint8)

    @classmethod
    def constant(cls, value: Any, rows: int) -> Table:
        return cls(np.zeros(rows, dtype=np.int64), [value])

    def __len__(self) -> int:
        return len(self.ids)

    def codes(self) -> Codes:
        codes: Codes = self._codes[self.ids] if len(self.table) else self._codes[:0]
        return codes

    def part(self, code: int) -> Values:
        return Table(self.ids[self.codes() == code], self.table)

    def tolist(self) -> list[Any]:
        table = self.table
        return [table[i] for i in self.ids.tolist()]

    def ints(self) -> IntArray | None:
        try:
            values = np.array(
                [int(v) if c == INT else 0 for v, c in zip(self.table, self._codes, strict=True)],
                dtype=np.int64,
            )
        except (OverflowError, TypeError, ValueError):
            return super().ints()
        ints: IntArray = values[self.ids] if len(self.table) else values[:0]
        return ints

    def strings(self) -> tuple[list[str], IntArray]:
        distinct: dict[str, int] = {}
        index = np.array(
            [distinct.setdefault(str(v), len(distinct)) for v in self.table], dtype=np.int64
        )
        ids: IntArray = index[self.ids] if len(self.table) else self.ids
        return list(distinct), ids

    def records(self) -> Records:
        shapes: dict[tuple[str, ...], int] = {}
        shape_of = np.array(
            [
                shapes.setdefault(tuple(v) if isinstance(v, Mapping) else (), len(shapes))
                for v in self.table
            ],
            dtype=np.int64,
        )
        codes = shape_of[self.ids] if len(self.table) else self.ids
        union = dict.fromkeys(key for keys in shapes for key in keys)
        fields: dict[str, Values] = {}
        for key in union:
            has = np.array([isinstance(v, Mapping) and key in v for v in self.table])
            column = [v[key] if isinstance(v, Mapping) and key in v else None for v in self.table]
            fields[key] = Table(self.ids[has[self.ids]], column)
        return Records(len(self), list(shapes), codes, fields)

    def lists(self) -> Lists:
        sizes = np.array(
            [len(v) if c == LIST else 0 for v, c in zip(self.table, self._codes, strict=True)],
            dtype=np.int64,
        )
        lengths = sizes[self.ids] if len(self.table) else self.ids
        longest = int(sizes.max()) if len(self.table) else 0
        positions: list[Values] = []
        for j in range(longest):
            column = [
                v[j] if size > j else None
                for v, size in zip(self.table, sizes.tolist(), strict=True)
            ]
            positions.append(Table(self.ids[lengths > j], column))
        return Lists(lengths, positions)


class Mixed(Values):
    """Rows of several types: each row's code, and the rows of each code (in order)."""

    def __init__(self, codes: npt.NDArray[Any], parts: Mapping[int, Values]) -> None:
        self._codes = np.asarray(codes, dtype=np.uint8)
        self.parts = dict(parts)

    def __len__(self) -> int:
        return len(self._codes)

    def codes(self) -> Codes:
        return self._codes

    def part(self, code: int) -> Values:
        part = self.parts.get(code)
        if part is not None:
            return part
        count = int((self._codes == code).sum())
        constant = {NULL: None, TRUE: True, FALSE: False}.get(code)
        return Plain([constant] * count)

    def tolist(self) -> list[Any]:
        out: list[Any] = [None] * len(self)
        for code in np.unique(self._codes).tolist():
            where = np.flatnonzero(self._codes == code).tolist()
            for row, value in zip(where, self.part(code).tolist(), strict=True):
                out[row] = value
        return out


class Records(_Uniform):
    """Dicts: the key sequences (shapes), each row's shape, and each key's column over the
    rows that have it."""

    code = DICT

    def __init__(
        self,
        rows: int,
        shapes: Sequence[tuple[str, ...]],
        codes: npt.NDArray[Any] | None,
        fields: Mapping[str, Values],
    ) -> None:
        self.rows = rows
        self.shapes = list(shapes)
        self.shape_codes = (
            np.zeros(rows, dtype=np.int64) if codes is None else np.asarray(codes, dtype=np.int64)
        )
        self.fields = dict(fields)

    @classmethod
    def of_rows(cls, rows: Sequence[Any]) -> Records:
        return Table(np.arange(len(rows)), rows).records()

    def __len__(self) -> int:
        return self.rows

    def records(self) -> Records:
        return self

    def tolist(self) -> list[Any]:
        iterators: dict[str, Any] = {key: iter(v.tolist()) for key, v in self.fields.items()}
        return [
            {key: next(iterators[key]) for key in self.shapes[code]}
            for code in self.shape_codes.tolist()
        ]


class Lists(_Uniform):
    """Lists: each row's length, and either a column per position (the rows longer than it)
    or one column of every item in order."""

    code = LIST

    def __init__(
        self,
        lengths: npt.NDArray[Any],
        positions: Sequence[Values] | None = None,
        items: Values | None = None,
    ) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.positions = list(positions) if positions is not None else None
        self._items = items

    @classmethod
    def of_rows(cls, rows: Sequence[Any]) -> Lists:
        return Table(np.arange(len(rows)), rows).lists()

    def __len__(self) -> int:
        return len(self.lengths)

    def lists(self) -> Lists:
        return self

    def position(self, j: int) -> Values:
        if self.positions is None:
            return Plain([row[j] for row in self.tolist() if len(row) > j])
        return self.positions[j]

    def items(self) -> Values:
        """Every row's items, in order."""
        if self._items is not None:
            return self._items
        if self.positions is not None and (len(self.lengths) == 0 or self.lengths.max() <= 1):
            return self.positions[0] if self.positions else Plain([])
        return Plain([item for row in self.tolist() for item in row])

    def tolist(self) -> list[Any]:
        if self.positions is None:
            flat = self.items().tolist()
            starts = np.cumsum(self.lengths) - self.lengths
            return [
                flat[s : s + n] for s, n in zip(starts.tolist(), self.lengths.tolist(), strict=True)
            ]
        out: list[list[Any]] = [[] for _ in range(len(self))]
        for j, column in enumerate(self.positions):
            for row, value in zip(
                np.flatnonzero(self.lengths > j).tolist(), column.tolist(), strict=True
            ):
                out[row].append(value)
        return out


class Interleave(Values):
    """Rows from several columns: group ``g`` gives rows ``groups[g][0]`` (ascending), its
    values ``groups[g][1]`` (a column computed one way for some rows, another for the rest)."""

    def __init__(self, rows: int, groups: Sequence[tuple[npt.NDArray[Any], Values]]) -> None:
        self.rows = rows
        self.groups = [(np.asarray(w, dtype=np.int64), v) for w, v in groups if len(w)]

    def __len__(self) -> int:
        return self.rows

    def codes(self) -> Codes:
        out = np.zeros(self.rows, dtype=np.uint8)
        for where, values in self.groups:
            out[where] = values.codes()
        return out

    def _subset(self, flags: list[npt.NDArray[np.bool_]], parts: list[Values]) -> Interleave:
        """The rows each group flags, with ``parts[g]`` as group ``g``'s values of them."""
        chosen = np.zeros(self.rows, dtype=bool)
        for (where, _), flag in zip(self.groups, flags, strict=True):
            chosen[where[flag]] = True
        rank = np.cumsum(chosen) - 1
        groups = [
            (rank[where[flag]], part)
            for (where, _), flag, part in zip(self.groups, flags, parts, strict=True)
        ]
        return Interleave(int(chosen.sum()), groups)

    def part(self, code: int) -> Values:
        flags = [values.codes() == code for _, values in self.groups]
        return self._subset(flags, [values.part(code) for _, values in self.groups])

    def tolist(self) -> list[Any]:
        out: list[Any] = [None] * self.rows
        for where, values in self.groups:
            for row, value in zip(where.tolist(), values.tolist(), strict=True):
                out[row] = value
        return out

    def ints(self) -> IntArray | None:
        out = np.zeros(self.rows, dtype=np.int64)
        for where, values in self.groups:
            ints = values.ints()
            if ints is None:
                return None
            out[where] = ints
        return out

    def floats(self) -> npt.NDArray[np.float64]:
        out = np.zeros(self.rows, dtype=np.float64)
        for where, values in self.groups:
            out[where] = values.floats()
        return out

    def strings(self) -> tuple[list[str], IntArray]:
        distinct: dict[str, int] = {}
        out = np.zeros(self.rows, dtype=np.int64)
        for where, values in self.groups:
            table, ids = values.strings()
            index = np.array([distinct.setdefault(s, len(distinct)) for s in table], np.int64)
            out[where] = index[ids] if len(table) else ids
        return list(distinct), out

    def records(self) -> Records:
        shapes: dict[tuple[str, ...], int] = {}
        codes = np.zeros(self.rows, dtype=np.int64)
        parts = [values.records() for _, values in self.groups]
        for (where, _), records in zip(self.groups, parts, strict=True):
            index = np.array([shapes.setdefault(s, len(shapes)) for s in records.shapes], np.int64)
            codes[where] = index[records.shape_codes]
        fields: dict[str, Values] = {}
        for key in dict.fromkeys(k for shape in shapes for k in shape):
            flags = [
                np.array([key in s for s in records.shapes], dtype=bool)[records.shape_codes]
                for records in parts
            ]
            values = [records.fields.get(key, Plain([])) for records in parts]
            fields[key] = self._subset(flags, values)
        return Records(self.rows, list(shapes), codes, fields)

    def lists(self) -> Lists:
        parts = [values.lists() for _, values in self.groups]
        lengths = np.zeros(self.rows, dtype=np.int64)
        for (where, _), lists in zip(self.groups, parts, strict=True):
            lengths[where] = lists.lengths
        longest = int(lengths.max()) if self.rows else 0
        positions: list[Values] = []
        for j in range(longest):
            flags = [lists.lengths > j for lists in parts]
            values = [
                lists.position(j) if flag.any() else Plain([])
                for lists, flag in zip(parts, flags, strict=True)
            ]
            positions.append(self._subset(flags, values))
        return Lists(lengths, positions)
