"""Settings of the Celery worker subprocess the end-to-end sync tests start: the project's,
on the test database and a queue of the test's own (so no stray message reaches it)."""

import os

from config.settings import *  # noqa: F403
from config.settings import DATABASES

DATABASES["default"]["NAME"] = os.environ["SCHEDBOARD_TEST_DATABASE"]
CELERY_TASK_DEFAULT_QUEUE = os.environ["SCHEDBOARD_TEST_QUEUE"]
