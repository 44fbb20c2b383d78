"""The Celery app (``celery -A config worker`` / ``beat``).

Configured from Django settings under the ``CELERY_`` prefix (see config/settings.py): without
``CELERY_BROKER_URL`` tasks run eagerly in-process (Celery's producer pool, which it still
touches, gets the in-memory transport), so the app needs no broker on a laptop.
Tasks are discovered in each installed app's ``tasks.py``; the beat schedule is
``CELERY_BEAT_SCHEDULE`` in the settings.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("schedboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
if not app.conf.broker_url:
    # No broker: tasks run eagerly, yet Celery still takes a producer from its pool first. Left
    # unset, that pool reaches for amqp://localhost and kombu warns "No hostname was supplied";
    # the in-process transport is as unused, and says nothing.
    app.conf.broker_url = "memory://localhost/"
app.autodiscover_tasks()
