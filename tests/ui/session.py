"""Logging in through the login page, as a person would."""

from __future__ import annotations

from typing import Any

from tests.personas import PASSWORD


def log_in(page: Any, live_server: Any, username: str) -> None:
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url  # pages need a login
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
