"""Derived integer arrays: a linear image of an earlier array, or a ratio of two row-aligned
arrays (a percentage of allocatable), stored as a reference or as what the prediction misses.

The prediction is part of the format: reading computes exactly what writing did."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from scoring.columnar.format import IntArray

# Derived columns: tried on arrays of at least this many rows with at least this many distinct
# values among the first SAMPLE; predictions use operands below LIMIT in magnitude and factors
# up to MAX_FACTOR, so no product overflows 64 bits.
MIN_ROWS = 32
MIN_DISTINCT = 8
SAMPLE = 64
SCREEN = 4  # rows every candidate pair is first tried on
LIMIT = 2**40
MAX_FACTOR = 10**6


def linear_shape(array: IntArray) -> tuple[bytes, int, int] | None:
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


def varied(array: IntArray) -> bool:
    """Whether ``array`` has enough distinct values (among its first rows) to be worth
    predicting."""
    return len(np.unique(array[:SAMPLE])) >= MIN_DISTINCT


def predict(form: str, a: IntArray, b: IntArray, factor: int) -> IntArray:
    """A derived column's prediction from two others: ``ratio`` is ``a * factor // b`` (a
    percentage of allocatable), ``rest`` is ``(b - a) * factor // b`` (the free share); 0 where
    ``b`` is 0. Part of the format: reading computes the same."""
    top = a if form == "ratio" else b - a
    safe = np.where(b == 0, 1, b)
    predicted: IntArray = np.where(b == 0, 0, (top * factor) // safe)
    return predicted


def entropy(array: IntArray) -> float:
    """Bits to code ``array`` value by value (order-0 entropy times length)."""
    _, counts = np.unique(array, return_counts=True)
    shares = counts / len(array)
    return float(-(counts * np.log2(shares)).sum())


def predictions(
    array: IntArray,
    usable: list[tuple[int, IntArray]],
    constants: list[tuple[int, IntArray]],
    factors: tuple[int, ...],
) -> Iterator[tuple[str, int, int, int | None, int]]:
    """(form, a, b, k, factor) whose prediction is within 1 of ``array`` on its first rows:
    ``a`` and ``b`` index ``usable``, ``k`` (an optional constant added to ``a``) indexes
    ``constants``. Every (a, b) pair is first tried on the first ``SCREEN`` rows, and only the
    pairs close there on all ``SAMPLE``: the same answers, for a fraction of the work."""
    sample = array[:SAMPLE]
    rows = np.stack([other[:SAMPLE] for _, other in usable])
    added = [None, *range(len(constants))]
    for factor in factors:
        if factor > MAX_FACTOR:
            continue
        for k in added:
            tops = rows if k is None else rows + constants[k][1][:SAMPLE]
            for form in ("ratio", "rest"):
                screened = _close(form, tops[:, :SCREEN], rows[:, :SCREEN], sample[:SCREEN], factor)
                pairs = np.nonzero(screened)
                if not len(pairs[0]):
                    continue
                a, b = pairs
                top = tops[a] if form == "ratio" else rows[b] - tops[a]
                close = _within(top, rows[b], sample, factor)
                for first, second in zip(a[close].tolist(), b[close].tolist(), strict=True):
                    if first != second:
                        yield form, first, second, k, factor


def _close(form: str, tops: IntArray, rows: IntArray, sample: IntArray, factor: int) -> Any:
    """For every (a, b): whether ``form``'s prediction from ``tops[a]`` and ``rows[b]`` is
    within 1 of ``sample`` on every row."""
    numerators = tops[:, None, :] if form == "ratio" else rows[None] - tops[:, None]
    return _within(numerators, rows[None], sample, factor)


def _within(numerators: IntArray, denominators: IntArray, sample: IntArray, factor: int) -> Any:
    """Whether ``numerators * factor // denominators`` (0 where a denominator is 0) is within
    1 of ``sample`` on every row (the last axis)."""
    safe = np.where(denominators == 0, 1, denominators)
    guess = np.where(denominators == 0, 0, (numerators * factor) // safe)
    return np.abs(guess - sample).max(axis=-1) <= 1
