"""Collect-field ownership per field: schedboard removes from colocation-config only the
cluster-wide collect fields it wrote, never one it did not (such as Koordinator's
``metricAggregateDurationSeconds`` when the policy sets only the report interval).

A cluster whose last push owned the collect fields (``owns_collect_fields``) owned exactly the
fields its default collect policy sets; the rest were the ones the old rule wrongly removed.
"""

from django.db import migrations, models

FIELDS = (
    ("metricAggregateDurationSeconds", "aggregate_duration_seconds"),
    ("metricReportIntervalSeconds", "report_interval_seconds"),
)


def per_field(apps, schema_editor):
    states = apps.get_model("policy", "ClusterSyncState")
    policies = apps.get_model("policy", "NodeMetricCollectPolicy")
    for state in states.objects.filter(owns_collect_fields=True):
        default = policies.objects.filter(cluster_id=state.cluster_id, is_default=True).first()
        state.owned_collect_fields = [
            key for key, field in FIELDS if default is None or getattr(default, field) is not None
        ]
        state.save(update_fields=["owned_collect_fields"])


def as_flag(apps, schema_editor):
    states = apps.get_model("policy", "ClusterSyncState")
    for state in states.objects.all():
        if state.owned_collect_fields:
            state.owns_collect_fields = True
            state.save(update_fields=["owns_collect_fields"])


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0008_what_if_thresholds"),
    ]

    operations = [
        migrations.AddField(
            model_name="clustersyncstate",
            name="owned_collect_fields",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(per_field, as_flag),
        migrations.RemoveField(
            model_name="clustersyncstate",
            name="owns_collect_fields",
        ),
    ]
