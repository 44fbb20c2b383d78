"""Values computed on first use: once per object, then read from the object itself."""

from __future__ import annotations

from scoring.lazy import cached_property


class Counted:
    def __init__(self, base: int) -> None:
        self.base = base
        self.calls = 0

    @cached_property
    def doubled(self) -> int:
        """Twice the base."""
        self.calls += 1
        return self.base * 2


def test_computed_once_per_object() -> None:
    first, second = Counted(2), Counted(5)
    assert (first.doubled, first.doubled, second.doubled) == (4, 4, 10)
    assert (first.calls, second.calls) == (1, 1)
    assert vars(first)["doubled"] == 4


def test_a_stored_value_can_be_dropped_and_recomputed() -> None:
    counted = Counted(3)
    assert counted.doubled == 6
    del counted.doubled
    counted.base = 4
    assert counted.doubled == 8
    assert counted.calls == 2


def test_the_class_attribute_is_the_descriptor() -> None:
    assert isinstance(Counted.doubled, cached_property)
    assert Counted.doubled.__doc__ == "Twice the base."
