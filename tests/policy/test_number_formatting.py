"""Counts read as people write them: thousands grouped, one node is not "1 nodes"."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from django.template.loader import render_to_string

WHEN = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)


def test_what_if_progress_groups_thousands() -> None:
    run = SimpleNamespace(
        status="running", progress_done=12500, progress_total=50000, pod_count=1, finished=None
    )
    html = render_to_string("policy/whatif/_status.html", {"run": run})
    assert "12,500 of 50,000 (1 pod under each configuration)" in html
