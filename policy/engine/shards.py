"""Which engine worker holds which cluster: ``shard = cluster id % ENGINE_SHARDS``, served on
the Celery queue ``ENGINE_QUEUE_PREFIX + shard`` (``engine-0`` … ``engine-<N-1>``).

Every task that needs a cluster's engine state (questions, stepping the state after a refresh,
evaluating pending pods) takes the cluster id as its first argument and is routed here, so it
runs in the one process that holds that state. More shards on more machines serve more
clusters; one engine worker may consume several shards' queues.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

# Tasks that run where the cluster's engine state is held (their first argument: cluster id).
ENGINE_TASKS = frozenset(
    {
        "policy.tasks.engine_question",
        "policy.tasks.prepare_snapshot",
        "policy.tasks.evaluate_pending",
    }
)


def shard_of(cluster_id: int) -> int:
    return int(cluster_id) % max(1, int(settings.ENGINE_SHARDS))


def queue_of(cluster_id: int) -> str:
    """The Celery queue of the engine worker that holds ``cluster_id``'s state."""
    return f"{settings.ENGINE_QUEUE_PREFIX}{shard_of(cluster_id)}"


def queues() -> list[str]:
    """Every engine queue (what ``celery worker -Q`` takes to serve all shards)."""
    return [f"{settings.ENGINE_QUEUE_PREFIX}{k}" for k in range(max(1, settings.ENGINE_SHARDS))]


def route(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any) -> Any:
    """Celery router (``CELERY_TASK_ROUTES``): engine tasks to their cluster's shard queue."""
    if name in ENGINE_TASKS and args:
        return {"queue": queue_of(args[0])}
    return None
