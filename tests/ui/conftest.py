"""Browser tests: Playwright driving Debian's chromium against pytest-django's live server.

Without chromium or the playwright package the tests are skipped with a message; in CI
(``CI=true``) that is a failure instead, since CI installs both. Screenshots of each main page
go to ``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policy.clusters.engine import clear_caches as clear_engine_caches
from policy.web.pages import clear_caches as clear_page_caches

CHROMIUM = os.environ.get("SCHEDBOARD_CHROMIUM", "/usr/bin/chromium")
# Without these chromium tries to reach the network and stalls or logs errors.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
LAPTOP = {"width": 1366, "height": 850}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[dev]')")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    # Playwright's sync API keeps an event loop running in this thread; Django's ORM calls from
    # the test (fixtures, assertions) are still synchronous, so its async guard must stand down.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield launched
            launched.close()
            # Connections opened while Playwright's loop ran belong to its context: close them,
            # or the test database cannot be dropped at the end.
            from django.db import connections

            connections.close_all()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # A Content-Security-Policy violation is only a console message; it fails the test too.
    page.on(
        "console",
        lambda message: (
            errors.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield page
    context.close()
    assert not errors, f"JavaScript errors or CSP violations: {errors}"


@pytest.fixture
def screenshot() -> Callable[[Any, str], Path]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    """The live server runs in this process: each test starts and ends with empty engine and
    page caches, so none sees snapshots another test stored under the same ids."""
    clear_engine_caches()
    clear_page_caches()
    yield
    clear_engine_caches()
    clear_page_caches()
