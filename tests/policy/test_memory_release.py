"""Freed memory is handed back to the system after every web request
(``policy.core.memory``): glibc keeps freed heap pages otherwise, and a web process reading
5,000-node explanations held twice the memory it used."""

from __future__ import annotations

import ctypes.util
import platform

import pytest
from django.test import Client

from policy.core import memory


@pytest.fixture
def trims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The calls to ``malloc_trim``, which still runs."""
    made: list[int] = []
    real = memory._trim

    def recorded(pad: int) -> int:
        made.append(pad)
        return real(pad) if real is not None else 0

    monkeypatch.setattr(memory, "_trim", recorded)
    return made


@pytest.mark.skipif(
    platform.system() != "Linux" or ctypes.util.find_library("c") is None, reason="glibc only"
)
def test_glibc_has_malloc_trim() -> None:
    assert memory.release_freed_memory() is True


def test_after_a_request(client: Client, trims: list[int]) -> None:
    assert client.get("/healthz").status_code == 200
    assert trims == [0]
