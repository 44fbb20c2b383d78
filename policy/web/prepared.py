"""Views of a snapshot prepared once and stored (``PreparedView``), so a fresh web process reads
them instead of rebuilding them from 5,000 nodes' objects.

The worker prepares them when a snapshot is stored (``policy.tasks.prepare_snapshot``): the
dashboard's per-node load for the cluster's LoadAware args in force and the pending pods the
evaluate form offers. Each is compressed JSON, not pickle, so a row read back can only ever
give data. A value is keyed by its snapshot (rows go with it) and, for the load, by the digest
and profile of the configuration it was built with: a changed configuration misses and the
page builds as before.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import zlib
from dataclasses import asdict
from datetime import datetime
from typing import Any

from policy.clusters.models import ClusterSnapshot, PreparedView
from policy.web.presenters.loadaware import ArgsInfo, ClusterLoad, NodeLoad, Usage

logger = logging.getLogger(__name__)

LOAD = "dashboard-load"
PENDING = "pending-pods"


def save(stored: ClusterSnapshot, kind: str, key: str, value: Any) -> None:
    data = zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 3)
    PreparedView.objects.update_or_create(
        snapshot=stored, kind=kind, key=key, defaults={"data": data}
    )


def has(stored: ClusterSnapshot, kind: str, key: str) -> bool:
    return PreparedView.objects.filter(snapshot=stored, kind=kind, key=key).exists()


def read(stored: ClusterSnapshot, kind: str, key: str) -> Any | None:
    """The prepared value, or None when nothing is prepared for it."""
    row = PreparedView.objects.filter(snapshot=stored, kind=kind, key=key).first()
    return None if row is None else json.loads(zlib.decompress(bytes(row.data)))


_NODE_FIELDS = [f.name for f in dataclasses.fields(NodeLoad)]
_USAGE = _NODE_FIELDS.index("usage")
_USAGE_FIELDS = [f.name for f in dataclasses.fields(Usage)]


def encode_load(load: ClusterLoad) -> dict[str, Any]:
    """A ClusterLoad as JSON-able data (rows as lists of their fields, in field order)."""
    rows = []
    for node in load.rows:  # field by field: ``asdict`` deep-copies, 5,000 nodes cost a second
        row = [getattr(node, name) for name in _NODE_FIELDS]
        row[_USAGE] = {
            name: [getattr(u, f) for f in _USAGE_FIELDS] for name, u in node.usage.items()
        }
        rows.append(row)
    return {
        "rows": rows,
        "args": asdict(load.args),
        "taken_at": load.taken_at.isoformat(),
        "pods_bound": load.pods_bound,
        "pods_pending": load.pods_pending,
        "problems": load.problems,
    }


def decode_load(data: dict[str, Any]) -> ClusterLoad:
    """The ClusterLoad ``encode_load`` was given."""
    rows = []
    for fields in data["rows"]:
        # Rows prepared before a field was added lack it: its default applies.
        node = dict(zip(NodeLoad.__dataclass_fields__, fields, strict=False))
        node["usage"] = {name: Usage(*values) for name, values in node["usage"].items()}
        if "labels" in node:
            node["labels"] = tuple(node["labels"])
        rows.append(NodeLoad(**node))
    return ClusterLoad(
        rows=rows,
        args=ArgsInfo(**data["args"]),
        taken_at=datetime.fromisoformat(data["taken_at"]),
        pods_bound=data["pods_bound"],
        pods_pending=data["pods_pending"],
        problems=data["problems"],
    )
