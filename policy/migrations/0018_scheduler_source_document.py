"""Scheduler configurations keep the document as imported or adopted (any config version)."""

from __future__ import annotations

from django.db import migrations, models

import policy.core.validators


class Migration(migrations.Migration):
    dependencies = [("policy", "0017_compact_decisions")]

    operations = [
        migrations.AddField(
            model_name="schedulerconfiguration",
            name="source_document",
            field=models.JSONField(
                blank=True,
                help_text="The document as imported or adopted from the cluster (any config "
                "version, sparse); what is written is this document with the edits made here "
                "applied.",
                null=True,
                validators=[policy.core.validators.JsonValueValidator()],
            ),
        ),
    ]
