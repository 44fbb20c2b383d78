from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = (
        "Create a superuser if it does not exist (idempotent) and print how to log in. "
        "The password comes from SCHEDBOARD_ADMIN_PASSWORD or is generated and kept in "
        "var/admin-password (readable by you only) so later runs can print it again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default="http://127.0.0.1:8000/")

    def handle(self, *args: Any, username: str, url: str, **options: Any) -> None:
        users = get_user_model()
        password_file = Path(settings.VAR_DIR) / "admin-password"
        user = users.objects.filter(username=username).first()
        if user is not None:
            password = _read(password_file)
            if password and not user.check_password(password):
                password = None  # changed since: the stored one would mislead
            note = "" if password else " (password unknown to this command: left unchanged)"
            self.stdout.write(f"User {username!r} already exists{note}.")
        else:
            password = os.environ.get("SCHEDBOARD_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
            users.objects.create_superuser(username=username, email="", password=password)
            _write(password_file, password)
            self.stdout.write(self.style.SUCCESS(f"Created superuser {username!r}."))
        self.stdout.write(f"Log in at {url}accounts/login/")
        self.stdout.write(f"  username: {username}")
        if password:
            self.stdout.write(f"  password: {password}")
        else:
            self.stdout.write(f"  reset it with: python manage.py changepassword {username}")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _write(path: Path, password: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(password + "\n")
