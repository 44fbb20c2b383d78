"""Clusters record the scheduler their configuration is for (set by operators or detected)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("policy", "0018_scheduler_source_document"),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="detected_scheduler_target",
            field=models.CharField(
                blank=True,
                editable=False,
                help_text="flavor@version the engine infers from the scheduler ConfigMap's document (its apiVersion and plugins), at the last refresh that read it.",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="cluster",
            name="scheduler_flavor",
            field=models.CharField(
                blank=True,
                choices=[
                    ("kube-scheduler", "kube-scheduler"),
                    ("koord-scheduler", "koord-scheduler"),
                    ("scheduler-plugins", "scheduler-plugins"),
                    ("custom", "custom"),
                ],
                help_text="The scheduler binary that reads the configuration (kube-scheduler, koord-scheduler, scheduler-plugins, custom); empty: the one detected from the cluster.",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="cluster",
            name="scheduler_version",
            field=models.CharField(
                blank=True,
                help_text="Its release (1.28 for kube-scheduler and custom, 1.7 for koord-scheduler, 0.35 for scheduler-plugins); empty: the newest that reads the configuration.",
                max_length=32,
            ),
        ),
    ]
