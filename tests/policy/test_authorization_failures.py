"""Refused requests are recorded with who made them, a read-only token's refused writes
included (refused at authentication, before the request has a user), and the records are
bounded in time and in rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from policy.accounts.models import AuthorizationFailure
from policy.accounts.retention import prune_authorization_failures
from policy.accounts.services import create_token
from policy.core.choices import ChangeSource
from policy.tasks import prune_authorization_failures_task

pytestmark = pytest.mark.django_db


def test_a_read_only_tokens_refused_write_names_its_user_and_token(
    api_client: Any, operator: User, demo_snapshot: Any, caplog: Any
) -> None:
    _, key = create_token(operator, name="dashboards", write_enabled=False)
    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/sync/"
    with caplog.at_level("WARNING", logger="policy.audit"):
        response = api_client.post(url, HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 403
    [refused] = AuthorizationFailure.objects.all()
    assert (refused.user, refused.user_name, refused.token_name, refused.source) == (
        operator,
        operator.username,
        "dashboards",
        ChangeSource.TOKEN,
    )
    assert (refused.method, refused.path, refused.status_code) == ("POST", url, 403)
    [line] = [r.getMessage() for r in caplog.records if "authorization failure" in r.getMessage()]
    assert f"user={operator.username}" in line and "token=dashboards" in line


def test_records_are_pruned_by_age_and_count(settings: Any) -> None:
    settings.AUTHORIZATION_FAILURE_RETENTION_DAYS = 30
    settings.AUTHORIZATION_FAILURE_RETENTION_COUNT = 3
    now = timezone.now()
    rows = [
        AuthorizationFailure.objects.create(
            source=ChangeSource.API,
            request_id=f"00000000-0000-0000-0000-{i:012d}",
            method="POST",
            path="/api/v1/x/",
            status_code=403,
        )
        for i in range(6)
    ]
    AuthorizationFailure.objects.filter(pk=rows[0].pk).update(time=now - timedelta(days=31))
    assert prune_authorization_failures(now) == 3  # the old one, then the two beyond three
    assert list(AuthorizationFailure.objects.order_by("id")) == rows[3:]
    assert prune_authorization_failures_task() == 0
    assert "prune-authorization-failures" in settings.CELERY_BEAT_SCHEDULE
