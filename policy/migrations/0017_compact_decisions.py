"""Decisions keep their explanation encoded (scoring.decision_codec), not as JSON.

Existing rows are converted in place, in format 1 (what the codec wrote when this migration was
made); going back decodes them to the same JSON. The codec used is the frozen copy in
``_explanation_codec``, so later codec changes do not change what this migration does."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

from policy.migrations._explanation_codec import decode, encode_v1

BATCH = 50


def _summary(explanation: dict[str, Any], data: bytes) -> dict[str, Any]:
    # A copy of PlacementDecision.summary_of as of this migration (models may change later).
    nodes = explanation.get("nodes")
    return {
        "fields": {k: v for k, v in explanation.items() if k != "nodes"},
        "nodes": len(nodes) if isinstance(nodes, list) else 0,
        "bytes": len(data),
    }


def encode_explanations(apps: Any, schema_editor: Any) -> None:
    decisions = apps.get_model("policy", "PlacementDecision")
    rows = decisions.objects.filter(explanation__isnull=False).only("id", "explanation")
    for row in rows.iterator(chunk_size=BATCH):
        explanation = row.explanation if isinstance(row.explanation, dict) else {}
        data = encode_v1(explanation)
        decisions.objects.filter(pk=row.pk).update(
            explanation_data=data, explanation_summary=_summary(explanation, data)
        )


def decode_explanations(apps: Any, schema_editor: Any) -> None:
    decisions = apps.get_model("policy", "PlacementDecision")
    rows = decisions.objects.only("id", "explanation_data")
    for row in rows.iterator(chunk_size=BATCH):
        explanation = decode(bytes(row.explanation_data))
        decisions.objects.filter(pk=row.pk).update(explanation=explanation)


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0016_snapshot_chains"),
    ]

    operations = [
        migrations.AlterField(
            model_name="placementdecision",
            name="explanation",
            field=models.JSONField(null=True, help_text="The engine's decision, node by node."),
        ),
        migrations.AddField(
            model_name="placementdecision",
            name="explanation_data",
            field=models.BinaryField(
                default=b"",
                help_text="The engine's decision, node by node, encoded by scoring.decision_codec.",
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="placementdecision",
            name="explanation_summary",
            field=models.JSONField(
                default=dict,
                help_text="The explanation's top-level fields (all but the node list) and its size.",
            ),
        ),
        migrations.RunPython(encode_explanations, decode_explanations),
        migrations.RemoveField(model_name="placementdecision", name="explanation"),
    ]
