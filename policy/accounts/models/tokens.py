"""API tokens: a user's credentials for scripts, optionally read-only and expiring."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """A bearer token. Only its SHA-256 is stored; the key is shown once, at creation.

    Keys carry 160 random bits, so a plain (unsalted) hash is enough to make a database leak
    useless, and lets a request find its token with one indexed lookup.
    """

    KEY_PREFIX = "sbd_"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'ci-deploy'.")
    key_prefix = models.CharField(max_length=12, editable=False, help_text="To recognise a key.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    write_enabled = models.BooleanField(
        default=True, help_text="Read-only tokens get 403 on any unsafe method."
    )
    expires = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="apitoken_name_unique_per_owner")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"

    @classmethod
    def generate_key(cls) -> str:
        return cls.KEY_PREFIX + secrets.token_hex(20)

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    def set_key(self, key: str) -> None:
        self.key_prefix = key[: len(self.KEY_PREFIX) + 4]
        self.key_hash = self.hash_key(key)

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires is not None and self.expires <= (now or timezone.now())
