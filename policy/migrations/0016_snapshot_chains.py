"""Snapshots as keyframes and chains of changes (policy.clusters.snapshot_chains).

The object list keeps its column (``objects``): the field is renamed in the model state only,
so every existing snapshot is a keyframe as it stands and nothing is copied.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0015_scheduler_message"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(
                    model_name="clustersnapshot", old_name="objects", new_name="stored_objects"
                ),
                migrations.AlterField(
                    model_name="clustersnapshot",
                    name="stored_objects",
                    field=models.JSONField(
                        db_column="objects",
                        default=list,
                        help_text="List of Kubernetes objects (keyframes; empty when "
                        "``changes`` is set).",
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name="clustersnapshot",
            name="changes",
            field=models.JSONField(
                blank=True,
                help_text='Since the previous snapshot of the chain: {"put": [objects], '
                '"delete": [[kind, namespace, name]]}.',
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="clustersnapshot",
            name="keyframe",
            field=models.ForeignKey(
                blank=True,
                help_text="The snapshot holding every object that ``changes`` apply to (with "
                "the changes of the chain's earlier snapshots); empty for a keyframe.",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="policy.clustersnapshot",
            ),
        ),
    ]
