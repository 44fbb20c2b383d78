"""The API tokens page in a real browser, at a laptop's and a phone's width: reached from the
navigation, a token created, its key shown once and copied with one click, then revoked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policy.accounts.models import ApiToken
from policy.core.choices import Role
from tests.personas import create_user as make_user
from tests.ui.session import log_in
from tests.ui.test_mobile import PHONE, WIDEST

pytestmark = pytest.mark.django_db(transaction=True)

Shot = Callable[[Any, str], Path]


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_create_copy_once_and_revoke(
    page: Any, live_server: Any, screenshot: Shot, viewport: dict[str, int]
) -> None:
    page.set_viewport_size(viewport)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    make_user("vera", Role.VIEWER)
    log_in(page, live_server, "vera")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="API tokens").click()
    page.wait_for_url(f"{live_server.url}/tokens/")
    page.get_by_label("Name").fill("laptop-script")
    page.get_by_role("button", name="Create token").click()
    key_box = page.get_by_label("The new token's key")
    key = key_box.input_value()
    token = ApiToken.objects.get(name="laptop-script")
    assert token.key_hash == ApiToken.hash_key(key)
    copy = page.get_by_role("button", name="Copy")
    copy.click()
    page.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == key
    assert page.evaluate(WIDEST) is None
    screenshot(page, f"tokens-created-{viewport['width']}")

    page.goto(f"{live_server.url}/tokens/")  # shown once: not on the list
    assert key not in page.content()
    row = page.locator("#token-table tbody tr", has_text="laptop-script")
    assert token.key_prefix in row.inner_text()
    row.get_by_role("button", name="Revoke laptop-script").click()
    page.get_by_text("Token 'laptop-script' revoked").wait_for()
    assert not ApiToken.objects.filter(pk=token.pk).exists()
