"""Writing a decision's explanation after the decision is recorded.

On a 5,000-node cluster the engine decides in tens of milliseconds, but making and encoding
every node's explanation takes about a second: an evaluation over the API would wait on it.
So :func:`hold` records the decision with its explanation pending (a
:class:`PendingExplanation` row keeps what rebuilds it exactly: the configuration document
and target as evaluated, and the snapshot, which cannot be deleted meanwhile) and the
process's writer thread writes it when the process is idle, within
``EXPLANATION_WRITE_DELAY`` seconds (``EXPLANATION_WRITER``: ``background``; ``on-read``
leaves it to the next reader). Whatever happens to that process, nothing is lost: reading a
pending decision (:meth:`PlacementDecision.stored_explanation`) writes it first, the beat's
``complete_explanations`` writes those left behind, and snapshot retention writes a
snapshot's pending ones before deleting it. A process that did not make the decision
rebuilds it by evaluating the stored pod again on the stored inputs; the engine is
deterministic, so the explanation is the one the decision was made with.
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from policy.clusters.engine import engine_for, evaluate_on
from policy.clusters.models import ClusterSnapshot
from policy.decisions.models import ExplanationBase, PendingExplanation, PlacementDecision
from scoring import decision_codec
from scoring.config import Target
from scoring.decision import Decision
from scoring.objects import parse_pod
from scoring.snapshot import gc_paused

logger = logging.getLogger(__name__)

BACKGROUND = "background"
QUIET = 0.25  # seconds without a request before the writer takes the processor
STALE_AFTER = timedelta(minutes=1)  # pending longer than this: its process did not write it
HELD = 32  # decisions a process keeps for writing; older ones are evaluated again to write

# Decisions made here, not written yet, by their PendingExplanation's token (not the row id,
# which a rolled-back transaction leaves free for another process's decision).
_held: OrderedDict[uuid.UUID, Decision] = OrderedDict()
_held_lock = threading.Lock()


def write(row: PlacementDecision, decision: Decision, stored: ClusterSnapshot) -> None:
    """Set ``row``'s explanation from the engine's ``decision`` (not saved)."""
    # Columns from the engine's arrays, no per-node dicts (decision_codec.pack_decision); a
    # plugin without columns of its own still makes a dict per node, none cyclic.
    with gc_paused():
        packed = decision_codec.pack_decision(decision)
        row.set_packed_explanation(packed, _base(stored, packed))


def _base(stored: ClusterSnapshot, packed: decision_codec.Packed) -> ExplanationBase:
    """The base of decisions made on ``stored``: the first one's columns (docs/decisions.md).
    Locked until the decision is saved, so retention cannot delete it meanwhile (its delete
    waits, then fails on the new reference and is retried by the next run)."""
    bases = ExplanationBase.objects.select_for_update().filter(snapshot=stored)
    base = bases.order_by("id").first()
    if base is None:
        made = decision_codec.Base(packed.payload)
        base = ExplanationBase.objects.create(
            cluster=stored.cluster, snapshot=stored, data=made.to_bytes(), digest=made.digest.hex()
        )
        base.keep(made)
    return base


def hold(
    row: PlacementDecision,
    decision: Decision,
    stored: ClusterSnapshot,
    document: Any,
    target: Target | None,
) -> None:
    """Keep ``row`` (saved, in the caller's transaction) pending: its explanation is written
    once that transaction commits, from ``decision`` while this process holds it."""
    pending = PendingExplanation.objects.create(
        decision=row,
        snapshot=stored,
        document=document,
        target=dataclasses.asdict(target) if target is not None else None,
    )
    with _held_lock:
        _held[pending.token] = decision
        while len(_held) > HELD:
            _held.popitem(last=False)
    if settings.EXPLANATION_WRITER == BACKGROUND:
        transaction.on_commit(lambda: _writer().submit(row.pk))


def complete(row: PlacementDecision) -> None:
    """Write ``row``'s explanation now if it is still pending (else read what was written)."""
    with transaction.atomic():
        pending = (
            PendingExplanation.objects.select_for_update()
            .select_related("snapshot")
            .filter(decision_id=row.pk)
            .first()
        )
        if pending is None:  # written meanwhile, by this process or another
            row.refresh_from_db(
                fields=["explanation_data", "explanation_base", "explanation_summary"]
            )
            return
        with _held_lock:
            decision = _held.get(pending.token)
        if decision is None:
            decision = _evaluate_again(row, pending)
        write(row, decision, pending.snapshot)
        row.save(update_fields=["explanation_data", "explanation_base", "explanation_summary"])
        pending.delete()
    with _held_lock:
        _held.pop(pending.token, None)


PlacementDecision.writer = complete


def _evaluate_again(row: PlacementDecision, pending: PendingExplanation) -> Decision:
    """The decision ``row`` recorded, made again from its stored inputs."""
    target = Target(**pending.target) if pending.target else None
    engine = engine_for(pending.document, target)
    decision = evaluate_on(pending.snapshot, engine, parse_pod(row.pod))
    if (decision.selected_node or "") != row.selected_node:
        logger.error(
            "decision %s: evaluated again, the engine selects %r where %r was recorded",
            row.pk,
            decision.selected_node,
            row.selected_node,
        )
    return decision


def complete_pending(ids: Iterable[int]) -> int:
    """Write the explanations of the pending decisions ``ids``; returns how many."""
    done = 0
    rows = PlacementDecision.objects.filter(pk__in=list(ids), pending_explanation__isnull=False)
    for row in rows:
        try:
            complete(row)
        except Exception:  # stays pending (evaluated again when next written); others are
            logger.exception("decision %s: writing its explanation failed", row.pk)
        else:
            done += 1
    return done


def complete_stale(now: datetime | None = None) -> int:
    """Write the explanations left pending longer than :data:`STALE_AFTER` (their process
    stopped first); returns how many."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    stale = PendingExplanation.objects.filter(created__lt=cutoff)
    return complete_pending(stale.values_list("decision_id", flat=True))


# -- the writer thread ----------------------------------------------------------------------


class _Activity:
    """Requests in flight in this process, and when the last one ended."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.last_end = 0.0

    def started(self, **_: Any) -> None:
        with self.lock:
            self.in_flight += 1

    def finished(self, **_: Any) -> None:
        with self.lock:
            self.in_flight = max(0, self.in_flight - 1)
            self.last_end = time.monotonic()

    def idle(self) -> bool:
        with self.lock:
            return self.in_flight == 0 and time.monotonic() - self.last_end >= QUIET


_activity = _Activity()
request_started.connect(_activity.started, dispatch_uid="explanations-request-started")
request_finished.connect(_activity.finished, dispatch_uid="explanations-request-finished")


class _Writer:
    """One thread writing held explanations in turn, each when no request has run for
    :data:`QUIET` seconds or once it has waited ``EXPLANATION_WRITE_DELAY`` seconds: encoding
    takes the processor (and the GIL) from requests for about a second."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[float, int]] = queue.Queue()
        self.draining = threading.Event()
        self.thread = threading.Thread(target=self._run, name="explanation-writer", daemon=True)
        self.thread.start()
        atexit.register(self.drain)

    def submit(self, pk: int) -> None:
        self.queue.put((time.monotonic() + settings.EXPLANATION_WRITE_DELAY, pk))

    def drain(self, timeout: float = 60.0) -> None:
        """Write what is queued now, without waiting for quiet (the process is stopping)."""
        self.draining.set()
        end = time.monotonic() + timeout
        while self.queue.unfinished_tasks and time.monotonic() < end:
            time.sleep(0.05)

    def _run(self) -> None:
        while True:
            deadline, pk = self.queue.get()
            try:
                while not (self.draining.is_set() or _activity.idle()):
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.05)
                self._write(pk)
            finally:
                self.queue.task_done()

    @staticmethod
    def _write(pk: int) -> None:
        close_old_connections()
        try:
            complete_pending([pk])  # a failure leaves it pending: a reader or the beat writes it
        finally:
            connections.close_all()


_writer_instance: _Writer | None = None
_writer_lock = threading.Lock()


def _writer() -> _Writer:
    global _writer_instance
    with _writer_lock:
        if _writer_instance is None:
            _writer_instance = _Writer()
        return _writer_instance
