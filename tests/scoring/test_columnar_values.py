"""Values given by column pack to exactly the bytes of the rows they stand for."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import columnar
from scoring.columnar.format import DICT, INT, LIST, NULL, STR, type_code
from scoring.columnar.values import (
    Bools,
    Floats,
    Interleave,
    Ints,
    Lists,
    Mixed,
    Plain,
    Records,
    Table,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.from_regex(r"cpu [0-9]{1,3}% of [0-9]{1,5}", fullmatch=True),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.sampled_from("abcde"), children)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=8), st.lists(st.integers(0, 7), max_size=60))
def test_a_table_packs_as_its_rows(table: list[Any], picks: list[int]) -> None:
    ids = np.array([p % len(table) for p in picks], dtype=np.int64)
    rows = [table[i] for i in ids.tolist()]
    expected = columnar.pack(rows)
    assert columnar.pack(Table(ids, table)) == expected
    assert columnar.pack(Plain(rows)) == expected
    if rows and all(type_code(r, "$") == DICT for r in rows):
        assert columnar.pack(Records.of_rows(rows)) == expected
    if rows and all(type_code(r, "$") == LIST for r in rows):
        assert columnar.pack(Lists.of_rows(rows)) == expected


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"name": st.from_regex(r"node-[0-9]{1,4}", fullmatch=True)},
            optional={"n": st.integers(0, 300), "f": st.floats(0, 1), "ok": st.booleans()},
        ),
        min_size=1,
        max_size=70,
    )
)
def test_records_by_column_pack_as_their_rows(rows: list[dict[str, Any]]) -> None:
    shapes: dict[tuple[str, ...], int] = {}
    codes = np.array([shapes.setdefault(tuple(r), len(shapes)) for r in rows])
    keys = dict.fromkeys(k for shape in shapes for k in shape)
    fields: dict[str, Any] = {}
    for key in keys:
        present = [r[key] for r in rows if key in r]
        if key == "n":
            fields[key] = Ints(np.array(present))
        elif key == "f":
            fields[key] = Floats(np.array(present, dtype=np.float64))
        elif key == "ok":
            fields[key] = Bools(np.array(present, dtype=bool))
        else:
            names = sorted(set(present))
            fields[key] = Table(np.array([names.index(p) for p in present]), names)
    # Shapes given in another order than their rows first show them: the bytes do not change.
    order = list(reversed(list(shapes)))
    renumber = np.array([order.index(shape) for shape in shapes])
    by_column = Records(len(rows), order, renumber[codes], fields)
    assert columnar.pack(by_column) == columnar.pack(rows)
    assert by_column.tolist() == rows


def test_mixed_rows_and_lists_by_position_pack_as_their_rows() -> None:
    totals = [5, None, 7, None, 9]
    codes = np.array([type_code(t, "$") for t in totals], dtype=np.uint8)
    mixed = Mixed(codes, {INT: Ints(np.array([5, 7, 9]))})
    assert mixed.tolist() == totals
    assert columnar.pack(mixed) == columnar.pack(totals)
    scores = [[1, 2], [], [3, 4], [], [5, 6]]
    lengths = np.array([len(s) for s in scores])
    by_position = Lists(lengths, [Ints(np.array([1, 3, 5])), Ints(np.array([2, 4, 6]))])
    assert columnar.pack(by_position) == columnar.pack(scores)
    one = Lists(np.array([3]), items=Table(np.array([0, 1, 0]), ["a", None]))
    assert columnar.pack(one) == columnar.pack([["a", None, "a"]])
    assert {NULL, STR} == set(Table(np.array([0, 1]), [None, "x"]).codes().tolist())


@settings(max_examples=150, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=40), st.data())
def test_interleaved_columns_pack_as_their_rows(rows: list[Any], data: st.DataObject) -> None:
    groups = data.draw(st.lists(st.integers(0, 2), min_size=len(rows), max_size=len(rows)))
    parts = []
    for g in range(3):
        where = np.array([k for k, group in enumerate(groups) if group == g], dtype=np.int64)
        chosen = [rows[k] for k in where.tolist()]
        parts.append((where, Table(np.arange(len(chosen)), chosen) if g else Plain(chosen)))
    interleaved = Interleave(len(rows), parts)
    assert interleaved.tolist() == rows
    assert columnar.pack(interleaved) == columnar.pack(rows)
