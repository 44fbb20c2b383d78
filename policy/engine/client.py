"""Asking the engine tier a question about a cluster.

With a broker (a deployment), the question is a Celery task on the cluster's shard queue
(:mod:`policy.engine.shards`), answered by the engine worker that holds the cluster's state;
the asking process waits at most ``ENGINE_TIMEOUT`` seconds. A question nobody answers in time
(no engine worker consumes the queue, or it died) expires unanswered, so a restarted worker
never works through stale questions, and the caller gets :class:`EngineUnavailable`: a 503
naming the queue. Without a broker (the embedded default), or inside an engine worker, the
same handler answers in this process, through the same JSON round-trip.
"""

from __future__ import annotations

import json
import logging

from celery.exceptions import TimeoutError as CeleryTimeout
from django.conf import settings
from kombu.exceptions import OperationalError

from policy.core.broker import task_named
from policy.core.errors import ServiceUnavailable
from policy.engine import server, shards
from policy.engine.questions import Payload, Refused

logger = logging.getLogger(__name__)

ENGINE_QUESTION = "policy.tasks.engine_question"


class EngineUnavailable(ServiceUnavailable):
    """No engine worker answered for the cluster's shard in time."""

    def __init__(self, queue: str, why: str) -> None:
        self.queue = queue
        super().__init__(
            f"The engine for this cluster (queue {queue}) did not answer: {why}. "
            "Nothing was recorded; ask again once an engine worker serves the queue."
        )


def in_process() -> bool:
    """Answer here: no broker, ``ENGINE_IN_PROCESS``, or this process is the engine."""
    return bool(settings.ENGINE_IN_PROCESS or settings.CELERY_TASK_ALWAYS_EAGER or server.serving())


def ask(cluster_id: int, name: str, payload: Payload) -> Payload:
    """The engine's answer to question ``name`` about cluster ``cluster_id``.

    Raises :class:`~policy.engine.questions.Refused` when the engine refused the inputs and
    :class:`EngineUnavailable` when no engine answered.
    """
    if in_process():
        result = server.answer(name, json.loads(json.dumps(payload)))
    else:
        result = _ask_remote(cluster_id, name, payload)
    if "refused" in result:
        refused = result["refused"]
        raise Refused(refused["field"], refused["message"], refused.get("errors"))
    answer: Payload = result["answer"]
    return answer


def _ask_remote(cluster_id: int, name: str, payload: Payload) -> Payload:
    queue = shards.queue_of(cluster_id)
    timeout = settings.ENGINE_TIMEOUT
    try:
        sent = task_named(ENGINE_QUESTION).apply_async(
            (cluster_id, name, payload), queue=queue, expires=timeout
        )
    except (OperationalError, OSError) as exc:
        raise EngineUnavailable(queue, f"the broker is unreachable ({type(exc).__name__})") from exc
    try:
        result: Payload = sent.get(timeout=timeout, disable_sync_subtasks=False)
    except CeleryTimeout:
        logger.error("engine question %s for cluster %s: no answer on %s", name, cluster_id, queue)
        raise EngineUnavailable(queue, f"no answer within {timeout} s") from None
    except (OperationalError, OSError) as exc:
        raise EngineUnavailable(queue, f"the result backend failed ({type(exc).__name__})") from exc
    finally:
        sent.forget()
    return result
