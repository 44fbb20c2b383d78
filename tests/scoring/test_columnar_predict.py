"""The derived-column search (``columnar.predict.predictions``) screens candidate pairs on a few
rows before trying them on the whole sample: it must find exactly what trying every pair on
the whole sample finds, in the same order (the order decides ties, so the bytes written)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from scoring.columnar import predict
from scoring.columnar.format import IntArray


def every_pair(
    array: IntArray,
    usable: list[tuple[int, IntArray]],
    constants: list[tuple[int, IntArray]],
    factors: tuple[int, ...],
) -> Iterator[tuple[str, int, int, int | None, int]]:
    """The search without screening: every (a, b) on the whole sample."""
    sample = array[: predict.SAMPLE]
    for factor in factors:
        for k in [None, *range(len(constants))]:
            for form in ("ratio", "rest"):
                for a, (_, top) in enumerate(usable):
                    for b, (_, bottom) in enumerate(usable):
                        numerator = top if k is None else top + constants[k][1]
                        guess = predict.predict(
                            form, numerator[: predict.SAMPLE], bottom[: predict.SAMPLE], factor
                        )
                        if a != b and np.abs(guess - sample).max() <= 1:
                            yield form, a, b, k, factor


@pytest.mark.parametrize("seed", range(8))
def test_screened_search_finds_what_the_full_search_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = 200
    allocatable = rng.integers(1, 64, rows) * 1000
    used = rng.integers(0, 64_000, rows)
    usable = [
        (0, allocatable),
        (1, used),
        (2, np.full(rows, 500, dtype=np.int64)),
        (3, rng.integers(0, 3, rows)),  # zeros: denominators of 0 predict 0
        (4, rng.integers(0, 10**6, rows)),
    ]
    constants = [(2, usable[2][1])]
    percent = (used + 500) * 100 // allocatable
    percent[rng.integers(0, rows, 3)] += 1  # within 1: still predicted
    free = (allocatable - used) * 100 // allocatable
    for array in (percent, free, rng.integers(0, 100, rows)):
        found = list(predict.predictions(array, usable, constants, (100,)))
        assert found == list(every_pair(array, usable, constants, (100,)))
    assert ("ratio", 1, 0, 0, 100) in predict.predictions(percent, usable, constants, (100,))
