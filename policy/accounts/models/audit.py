"""The audit trail: every policy change (ObjectChange-style) and every refused request."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models

from policy.core.choices import ChangeAction, ChangeSource


class PolicyChange(models.Model):
    """One change of one policy object: who, when, from where, and its state before and after.

    ``object_version`` is the object's version after the change (for a delete, the version
    deleted). ``request_id`` groups the rows one request wrote, e.g. a profile's change and the
    resulting change of its scheduler configuration.
    """

    time = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="policy_changes",
    )
    user_name = models.CharField(max_length=150, blank=True, help_text="Kept if the user goes.")
    source = models.CharField(max_length=16, choices=ChangeSource.choices)
    token_name = models.CharField(max_length=100, blank=True)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    request_id = models.UUIDField(db_index=True)
    action = models.CharField(max_length=16, choices=ChangeAction.choices)
    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT, related_name="+")
    object_id = models.BigIntegerField()
    changed_object = GenericForeignKey("content_type", "object_id")
    object_repr = models.CharField(max_length=200)
    object_version = models.PositiveIntegerField()
    cluster = models.ForeignKey(
        "policy.Cluster",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="policy_changes",
    )
    message = models.CharField(max_length=500, blank=True)
    prechange_data = models.JSONField(null=True, blank=True)
    postchange_data = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-time", "-id"]
        indexes = [
            models.Index(fields=["content_type", "object_id", "-id"], name="policychange_object"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.object_repr} v{self.object_version} by {self.user_name}"

    def diff(self) -> dict[str, dict[str, Any]]:
        """Top-level fields that differ: ``{field: {"before": x, "after": y}}``."""
        before = self.prechange_data or {}
        after = self.postchange_data or {}
        return {
            key: {"before": before.get(key), "after": after.get(key)}
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        }


class AuthorizationFailure(models.Model):
    """A request refused for lack of rights (403): who tried what, from where."""

    time = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="authorization_failures",
    )
    user_name = models.CharField(max_length=150, blank=True)
    source = models.CharField(max_length=16, choices=ChangeSource.choices)
    token_name = models.CharField(max_length=100, blank=True)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    request_id = models.UUIDField()
    method = models.CharField(max_length=16)
    path = models.CharField(max_length=2000)
    status_code = models.PositiveSmallIntegerField()
    reason = models.CharField(max_length=500)

    class Meta:
        ordering = ["-time", "-id"]

    def __str__(self) -> str:
        return f"{self.user_name or 'anonymous'} {self.method} {self.path}: {self.reason}"
