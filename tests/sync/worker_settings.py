"""Settings of the Celery worker subprocess the end-to-end sync tests start: the project's,
on the test database and a queue of the test's own (so no stray message reaches it)."""

import os

from config.settings import *  # noqa: F403
from config.settings import DATABASES

DATABASES["default"]["NAME"] = os.environ["SCHEDBOARD_TEST_DATABASE"]
CELERY_TASK_DEFAULT_QUEUE = os.environ["SCHEDBOARD_TEST_QUEUE"]
# A test's worker answers engine questions itself, as the test process does: the tests of the
# engine tier (tests/engine/) start a real engine worker and ask it from the test process.
ENGINE_IN_PROCESS = True
