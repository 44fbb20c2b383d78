"""Fixtures for the sync tests: eager tasks whose on-commit enqueues run, a demo cluster."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def run_on_commit(celery_eager: None, django_capture_on_commit_callbacks: Any) -> Any:
    """``with run_on_commit(): ...``: on-commit callbacks (task sends) run, tasks eagerly."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
