"""Decisions stored alone (format 1, or 2 without a base) are re-encoded against a base per
snapshot (format 2).

Rows are taken snapshot by snapshot (by cluster, snapshot and its time, which outlives a pruned
snapshot); the first decision of each makes the base the others are compressed against. Going
back decodes them and stores each alone again, in format 1. The codec used is the frozen copy
in ``_explanation_codec``, so later codec changes do not change what this migration does.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

from policy.migrations._explanation_codec import (
    Base,
    ExplanationDataError,
    decode,
    encode,
    encode_v1,
    pack,
)

BATCH = 20


def share_bases(apps: Any, schema_editor: Any) -> None:
    decisions = apps.get_model("policy", "PlacementDecision")
    bases = apps.get_model("policy", "ExplanationBase")
    rows = (
        decisions.objects.filter(explanation_base__isnull=True)
        .order_by("cluster_id", "snapshot_taken_at", "snapshot_id", "id")
        .only("id", "cluster_id", "snapshot_id", "snapshot_taken_at", "explanation_data")
    )
    key: tuple[Any, ...] | None = None
    base: Any = None
    made: Base | None = None
    for row in rows.iterator(chunk_size=BATCH):
        try:
            packed = pack(decode(bytes(row.explanation_data)))
        except ExplanationDataError:
            continue  # unreadable as it is: kept as it is
        if key != (row.cluster_id, row.snapshot_id, row.snapshot_taken_at):
            key = (row.cluster_id, row.snapshot_id, row.snapshot_taken_at)
            made = Base(packed.payload)
            base = bases.objects.create(
                cluster_id=row.cluster_id,
                snapshot_id=row.snapshot_id,
                data=made.to_bytes(),
                digest=made.digest.hex(),
            )
        _store(decisions, row.pk, encode(packed, made), base)


def store_alone(apps: Any, schema_editor: Any) -> None:
    decisions = apps.get_model("policy", "PlacementDecision")
    bases = apps.get_model("policy", "ExplanationBase")
    found: dict[int, Base] = {}
    rows = decisions.objects.filter(explanation_base__isnull=False).only(
        "id", "explanation_base_id", "explanation_data"
    )
    for row in rows.iterator(chunk_size=BATCH):
        if row.explanation_base_id not in found:
            stored = bases.objects.get(pk=row.explanation_base_id)
            found = {row.explanation_base_id: Base.from_bytes(bytes(stored.data))}
        base = found[row.explanation_base_id]
        explanation = decode(bytes(row.explanation_data), base)
        _store(decisions, row.pk, encode_v1(explanation), None)
    bases.objects.all().delete()


def _store(decisions: Any, pk: int, data: bytes, base: Any) -> None:
    row = decisions.objects.only("explanation_summary").get(pk=pk)
    summary = {**(row.explanation_summary or {}), "bytes": len(data)}
    decisions.objects.filter(pk=pk).update(
        explanation_data=data, explanation_base=base, explanation_summary=summary
    )


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0022_explanation_bases"),
    ]

    operations = [migrations.RunPython(share_bases, store_alone)]
