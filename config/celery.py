"""The Celery app (``celery -A config worker`` / ``beat``).

Configured from Django settings under the ``CELERY_`` prefix (see config/settings.py): without
``CELERY_BROKER_URL`` tasks run eagerly in-process, so the app needs no broker on a laptop.
Tasks are discovered in each installed app's ``tasks.py``; the beat schedule is
``CELERY_BEAT_SCHEDULE`` in the settings.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("schedboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
