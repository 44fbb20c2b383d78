"""The engine tier (policy/engine/): decisions are written whole when answered, and no engine
state is kept in the database.

- ``PendingExplanation`` goes: explanations are no longer written after the answer. A decision
  an older release recorded whose explanation was never written keeps its row (outcome,
  selected node, message) and reads as "explanation never written"
  (``PlacementDecision._never_written``).
- ``PreparedEngineSnapshot`` goes: engine workers hold each cluster's state in memory and
  build it from the stored objects; the signed pickles are deleted with the table.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0027_descheduler_edits"),
    ]

    operations = [
        migrations.DeleteModel(name="PendingExplanation"),
        migrations.DeleteModel(name="PreparedEngineSnapshot"),
    ]
