"""The per-process cache of slow-to-build values (an engine worker's snapshots, engines,
dashboard loads).

Building a snapshot or a dashboard load of a 5,000-node cluster takes seconds, so builds run
outside the cache's lock: one builder per key (other callers of that key wait for it) while
every other key stays readable and buildable.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

V = TypeVar("V")


class BuildCache:
    """The ``size`` most recently used values by key. Builds run outside the
    cache's lock: one builder per key (others wait for it), and other keys stay readable."""

    def __init__(self, size: int, on_evict: Callable[[Any], None] | None = None) -> None:
        self.size = size
        self.on_evict = on_evict  # called with each value dropped (evicted or cleared)
        self.values: OrderedDict[Any, Any] = OrderedDict()
        self.building: dict[Any, threading.Event] = {}
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any | None:
        with self.lock:
            if key not in self.values:
                return None
            self.values.move_to_end(key)
            return self.values[key]

    def get_or_build(self, key: Any, build: Callable[[], V]) -> V:
        while True:
            with self.lock:
                if key in self.values:
                    self.values.move_to_end(key)
                    value: V = self.values[key]
                    return value
                running = self.building.get(key)
                if running is None:
                    done = self.building[key] = threading.Event()
                    break
            running.wait()  # another request builds it; then read it (or build, if it failed)
        try:
            value = build()
            self._store(key, value)
            return value
        finally:
            with self.lock:
                del self.building[key]
            done.set()

    def pop(self, key: Any) -> Any | None:
        """Forget ``key`` without dropping its value (the caller keeps it)."""
        with self.lock:
            return self.values.pop(key, None)

    def _store(self, key: Any, value: Any) -> None:
        dropped = []
        with self.lock:
            self.values[key] = value
            self.values.move_to_end(key)
            while len(self.values) > self.size:
                dropped.append(self.values.popitem(last=False)[1])
        self._dropped(dropped)

    def clear(self) -> None:
        with self.lock:
            dropped = list(self.values.values())
            self.values.clear()
        self._dropped(dropped)

    def _dropped(self, values: list[Any]) -> None:
        if self.on_evict is not None:
            for value in values:
                self.on_evict(value)
