"""``PlacementDecision.explanation_summary`` goes: it was written with every decision and never
read (the explanation's top-level fields and size are read from ``explanation_data``). Going
back adds the column again, empty (``{}``) on every row, as no release read it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0029_snapshot_scheduling_failures"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="placementdecision",
            name="explanation_summary",
        ),
    ]
