"""Engine snapshots the worker built and stored, so a fresh web process loads one instead of
building it.

Building the engine snapshot of a 5,000-node cluster and its plugins' state (LoadAware's
per-pod estimates of 40,000 pods, say) takes seconds of a web process's first evaluation;
loading the built objects back takes about one. The worker builds them once a snapshot is
stored (``policy.decisions.preparation``) and stores them here as a pickle, compressed with
Zstandard. Unlike the prepared views (JSON, ``policy.web.prepared``), a pickle can name any
code to run when loaded, so a row is loaded only when its HMAC-SHA256 under this deployment's
``SECRET_KEY`` matches: only a process holding the key, the one that also signs sessions,
can have written it. It is loaded only by a process running the same engine code (the
``fingerprint`` of the engine's sources and of Python's and numpy's versions), since a pickle
names classes and their fields. Anything else (no row, another fingerprint, a bad signature,
bytes that do not load) builds the snapshot as before.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
import platform
from pathlib import Path

import numpy as np
import zstandard
from django.utils.crypto import constant_time_compare, salted_hmac

import scoring
from policy.clusters.models import ClusterSnapshot, PreparedEngineSnapshot
from scoring.snapshot import Snapshot, gc_paused

logger = logging.getLogger(__name__)

MAGIC = b"SBE1"
_SALT = "schedboard.prepared-engine-snapshot"
_MAC = 32  # bytes of HMAC-SHA256
_LEVEL = 3  # Zstandard level: 73 MB of pickle -> 13 MB in about 0.1 s (5,000 nodes)


@functools.cache
def fingerprint() -> str:
    """SHA-256 of the engine's sources and the Python and numpy versions."""
    digest = hashlib.sha256(f"{platform.python_version()} {np.__version__}".encode())
    root = Path(scoring.__file__).parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def save(stored: ClusterSnapshot, snapshot: Snapshot) -> int:
    """Store ``snapshot`` (built from ``stored``) for web processes; the cluster's older
    ones go (pages and evaluations use the newest). Returns the bytes stored."""
    with gc_paused():
        packed = zstandard.ZstdCompressor(level=_LEVEL).compress(
            pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL)
        )
    data = MAGIC + _mac(packed) + packed
    PreparedEngineSnapshot.objects.update_or_create(
        snapshot=stored, fingerprint=fingerprint(), defaults={"data": data}
    )
    older = PreparedEngineSnapshot.objects.filter(snapshot__cluster_id=stored.cluster_id)
    older.exclude(snapshot=stored).delete()
    return len(data)


def is_prepared(stored: ClusterSnapshot) -> bool:
    rows = PreparedEngineSnapshot.objects.filter(snapshot=stored, fingerprint=fingerprint())
    return rows.exists()


def load(stored: ClusterSnapshot) -> Snapshot | None:
    """The engine snapshot stored for ``stored`` by a process running this code, or None."""
    row = PreparedEngineSnapshot.objects.filter(snapshot=stored, fingerprint=fingerprint())
    data = row.values_list("data", flat=True).first()
    if data is None:
        return None
    data = bytes(data)
    start = len(MAGIC) + _MAC
    head, mac, packed = data[: len(MAGIC)], data[len(MAGIC) : start], data[start:]
    if head != MAGIC or not constant_time_compare(mac, _mac(packed)):
        logger.warning("snapshot %s: prepared engine snapshot not signed here; ignored", stored.pk)
        return None
    try:
        with gc_paused():
            loaded = pickle.loads(zstandard.ZstdDecompressor().decompress(packed))
    except Exception:  # built as if nothing were prepared
        logger.exception("snapshot %s: prepared engine snapshot does not load", stored.pk)
        return None
    return loaded if isinstance(loaded, Snapshot) else None


def _mac(packed: bytes) -> bytes:
    return salted_hmac(_SALT, packed, algorithm="sha256").digest()
