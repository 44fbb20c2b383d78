"""Retention of the refused-request records: one client can be refused hundreds of times a
second, so the table is bounded in time and in rows, like decision history."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from policy.accounts.models import AuthorizationFailure


def prune_authorization_failures(now: datetime | None = None) -> int:
    """Delete the records older than ``AUTHORIZATION_FAILURE_RETENTION_DAYS`` and beyond the
    newest ``AUTHORIZATION_FAILURE_RETENTION_COUNT``; returns how many went."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.AUTHORIZATION_FAILURE_RETENTION_DAYS)
    deleted = int(AuthorizationFailure.objects.filter(time__lt=cutoff).delete()[0])
    keep = settings.AUTHORIZATION_FAILURE_RETENTION_COUNT
    newest = AuthorizationFailure.objects.order_by("-id").values_list("id", flat=True)
    oldest_kept = list(newest[keep - 1 : keep])  # rows are only added: ids follow time
    if oldest_kept:
        deleted += int(AuthorizationFailure.objects.filter(id__lt=oldest_kept[0]).delete()[0])
    return deleted
