"""The Celery app (``celery -A config worker`` / ``beat``).

Configured from Django settings under the ``CELERY_`` prefix (see config/settings.py): without
``CELERY_BROKER_URL`` tasks run eagerly in-process, so the app needs no broker on a laptop.
Tasks are discovered in each installed app's ``tasks.py``.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("schedboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Cluster sync (policy.sync). Every entry expires: a run missed while beat or the workers were
# down is dropped, not queued up behind the next one.
app.conf.beat_schedule = {
    **(app.conf.beat_schedule or {}),
    "apply-time-windows": {
        "task": "policy.tasks.apply_time_windows",
        "schedule": 60.0,  # windows open and close on the minute
        "options": {"expires": 50},
    },
    "drift-demo-metrics": {
        "task": "policy.tasks.drift_demo_metrics",
        "schedule": 60.0,  # NodeMetrics report every 60 s by default
        "options": {"expires": 50},
    },
    "recover-sync-jobs": {
        "task": "policy.tasks.recover_sync_jobs",
        "schedule": 60.0,
        "options": {"expires": 50},
    },
    "recover-what-ifs": {
        "task": "policy.tasks.recover_what_ifs",
        "schedule": 60.0,
        "options": {"expires": 50},
    },
}
