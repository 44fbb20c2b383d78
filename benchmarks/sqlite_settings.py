"""Settings for benchmarks that need a database: the project's, on a fresh SQLite file in a
temporary directory (whatever DATABASE_URL says), which the benchmark removes when done.

``SCHEDBOARD_BENCHMARK_DATABASE`` names an existing file instead: a benchmark's child process
(a fresh web process) reads the database its parent prepared."""

import os
import tempfile
from pathlib import Path

from config.settings import *  # noqa: F403

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SCHEDBOARD_BENCHMARK_DATABASE")
        or str(Path(tempfile.mkdtemp(prefix="schedboard-benchmark-")) / "db.sqlite3"),
    }
}
