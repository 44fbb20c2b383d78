"""The impact of a policy edit before it is saved (a service): the edit is made through the
editing service, which validates the whole configuration as a save would, inside a
transaction that is then rolled back; the engine compares the configuration before and after
on the cluster's newest snapshot. Nothing is saved, recorded or pushed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.db import transaction

from policy.accounts.changes import ChangeContext
from policy.clusters.engine import engine_for, snapshot_for
from policy.clusters.models import Cluster
from policy.decisions import evaluation
from policy.policies.models import LoadAwareSchedulingArgs
from policy.policies.services import LoadAwareArgsService
from scoring.advisor.impact import impact
from scoring.snapshot import gc_paused

DEFAULT_SCHEDULER = "default-scheduler"


class NoSnapshot(ValueError):
    """The cluster has no snapshot to compare on."""


class _RolledBack(Exception):
    def __init__(self, choice: evaluation.ConfigurationChoice) -> None:
        super().__init__("rolled back")
        self.choice = choice


def _after(cluster: Cluster, edit: Callable[[], Any]) -> evaluation.ConfigurationChoice:
    """The cluster's configuration as ``edit`` would leave it, without keeping the edit."""
    try:
        with transaction.atomic():
            edit()
            raise _RolledBack(evaluation.choose_configuration(cluster, None))
    except _RolledBack as done:
        return done.choice


def loadaware_args_impact(pk: int, values: Mapping[str, Any], ctx: ChangeContext) -> dict[str, Any]:
    """What saving ``values`` into LoadAware args ``pk`` would change (the PATCH's fields).
    Raises the editing service's errors (``PolicyInvalid``) as a save would, and
    :class:`NoSnapshot`."""
    args = LoadAwareSchedulingArgs.objects.select_related("profile__configuration__cluster").get(
        pk=pk
    )
    cluster = args.profile.configuration.cluster
    profile = args.profile.scheduler_name or DEFAULT_SCHEDULER
    stored = cluster.latest_snapshot()
    if stored is None:
        raise NoSnapshot(f"cluster {cluster.name} has no snapshot yet")
    before = evaluation.choose_configuration(cluster, None)
    service = LoadAwareArgsService()
    after = _after(cluster, lambda: service.update(pk, values, ctx, expected_version=None))
    old, new = engine_for(before.document, before.target), engine_for(after.document, after.target)
    with gc_paused():
        answer = impact(old, new, profile, snapshot_for(stored), stored.taken_at)
    return {**answer, "snapshot": stored.pk, "profile": profile}
