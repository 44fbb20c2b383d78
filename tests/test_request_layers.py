"""A request passes through each layer once, top to bottom.

The import contracts stop a module importing a layer above it; this checks the calls. While
an API request for a sync plan or an evaluation runs, every call into ``policy`` records the
layers on the stack; going back up (a domain calling into the pages, a service into the API)
would show as a lower layer's frame below an upper one's. The engine tier's server is where a
question enters the engine worker's process (``policy.engine.server``); in tests it answers
in-process, so a stack is read only up to it, as that process would see it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db

# pyproject.toml's layers contract, top first: a call goes only down this list.
RANK = {
    "api": 0,
    "tasks": 0,
    "management": 0,
    "web": 1,
    "decisions": 2,
    "sync": 3,
    "policies": 4,
    "engine": 5,
    "clusters": 6,
    "accounts": 6,
    "core": 7,
}
PROCESS_ENTRY = "policy.engine.server"


def _layer(frame: FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    parts = name.split(".")
    if parts[0] != "policy" or len(parts) < 2 or parts[1] not in RANK:
        return None
    return parts[1]


class LayerTrace:
    """The layers every call into ``policy`` was made through, and the calls that went up."""

    def __init__(self) -> None:
        self.visited: set[str] = set()
        self.upward: set[str] = set()
        self.entered: dict[str, str] = {}  # each layer's first function called

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or _layer(frame) is None:
            return
        stack: list[FrameType] = []
        current: FrameType | None = frame
        while current is not None and current.f_globals.get("__name__") != PROCESS_ENTRY:
            if current.f_code.co_name == "<module>":
                if current.f_globals.get("__name__", "").startswith("policy."):
                    return  # an import (e.g. the URLs the first request loads), not the request
                break  # the process's own entry (pytest's, here)
            stack.append(current)
            current = current.f_back
        self._check(list(reversed(stack)))

    def _check(self, outer_first: list[FrameType]) -> None:
        """A frame above the deepest layer so far is a call back up, unless its layer is
        already on the stack: a lower layer running what its caller handed it (a cache's
        builder, a hook) works on that caller's behalf."""
        deepest: tuple[int, FrameType] | None = None
        seen: set[str] = set()
        for frame in outer_first:
            layer = _layer(frame)
            if layer is None:
                continue
            self.visited.add(layer)
            self.entered.setdefault(layer, _where(frame))
            rank = RANK[layer]
            if deepest is not None and rank < deepest[0] and layer not in seen:
                self.upward.add(f"{_where(deepest[1])} -> {_where(frame)}")
            seen.add(layer)
            if deepest is None or rank > deepest[0]:
                deepest = (rank, frame)


def _where(frame: FrameType) -> str:
    return f"{frame.f_globals.get('__name__')}.{frame.f_code.co_name}"


@contextmanager
def traced() -> Iterator[LayerTrace]:
    trace = LayerTrace()
    sys.setprofile(trace)
    try:
        yield trace
    finally:
        sys.setprofile(None)


def test_an_evaluation_goes_down_the_layers_once(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    pod = make_pod("web-1", containers=[make_container("app", {"cpu": "500m"})])
    with traced() as trace:
        response = api_client.post(
            f"/api/v1/clusters/{demo_snapshot.cluster_id}/evaluate/", {"pod": pod}, format="json"
        )
    assert response.status_code == 201, response.content
    assert trace.upward == set(), sorted(trace.upward)
    assert {"api", "decisions", "engine"} <= trace.visited
    assert "web" not in trace.visited, trace.entered["web"]


def test_a_sync_plan_goes_down_the_layers_once(
    api_client: Any, operator: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(operator)
    with traced() as trace:
        response = api_client.post(f"/api/v1/clusters/{demo_snapshot.cluster_id}/sync/plan/")
    assert response.status_code == 200, response.content
    assert trace.upward == set(), sorted(trace.upward)
    assert {"api", "sync", "clusters"} <= trace.visited
    assert "web" not in trace.visited, trace.entered["web"]


def test_the_trace_sees_a_call_that_goes_back_up() -> None:
    """The check is real: a function of ``core`` that calls into the pages is reported."""
    from policy.web import format as fmt

    planted: dict[str, Any] = {"__name__": "policy.core.planted", "fmt": fmt}
    exec("def core_calls_web():\n    return fmt.cores(1000)\n", planted)
    with traced() as trace:
        planted["core_calls_web"]()
    assert trace.upward == {"policy.core.planted.core_calls_web -> policy.web.format.cores"}
