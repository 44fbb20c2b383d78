"""Security headers, login throttling, offline API docs, and `check --deploy` clean with the
production settings the README documents."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client

from tests.personas import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_pages_carry_a_nonce_based_content_security_policy(client: Client, viewer: User) -> None:
    client.force_login(viewer)
    response = client.get("/")
    policy = response["Content-Security-Policy"]
    nonce = re.search(r"script-src 'self' 'nonce-([^']+)'", policy)
    assert nonce, policy
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy
    # The page's own script carries this response's nonce; no inline script exists.
    html = response.content.decode()
    assert f'nonce="{nonce.group(1)}"' in html
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    other = client.get("/")["Content-Security-Policy"]
    assert other != policy  # a fresh nonce per response


def test_repeated_wrong_passwords_lock_the_account_out(client: Client, viewer: User) -> None:
    def attempt(password: str) -> int:
        data = {"username": viewer.username, "password": password}
        return int(client.post("/accounts/login/", data).status_code)

    assert [attempt("wrong") for _ in range(9)] == [200] * 9  # the form again, with its error
    assert attempt("wrong") == 429  # the tenth: locked out
    locked = client.post("/accounts/login/", {"username": viewer.username, "password": PASSWORD})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another user (or the same one from elsewhere) is not locked out.
    other = User.objects.create_user("walt", password=PASSWORD)
    fine = client.post("/accounts/login/", {"username": other.username, "password": PASSWORD})
    assert fine.status_code == 302


def test_the_api_docs_load_nothing_from_another_site(client: Client, viewer: User) -> None:
    client.force_login(viewer)
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(source.startswith("/") for source in sources), sources
    assert "<script>" not in html  # the docs' own script is a file too (CSP)
    for source in sources:
        if source.startswith(settings.STATIC_URL):  # served by whitenoise / runserver
            assert finders.find(source.removeprefix(settings.STATIC_URL)), source
        else:
            assert client.get(source).status_code == 200, source


def test_check_deploy_is_clean_with_the_documented_production_settings(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DEBUG": "false",
        "SECRET_KEY": "k" * 20 + "Zq8#vT2!mW5@xR9$pL4%nB7^cF1&hJ6*dG3",
        "ALLOWED_HOSTS": "sched.example.com",
        "SECURE_COOKIES": "true",
        "SECURE_SSL_REDIRECT": "true",
        "SECURE_HSTS_SECONDS": "31536000",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
        "SECURE_HSTS_PRELOAD": "true",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
