"""Work that must not hold a request, on a deployment with no broker (the embedded default):
a ``manage.py`` command in a process of its own.

No thread in the web process, and no cost moved into it: the command opens its own database
connection, writes its progress to its row, and ends. The web process only starts it and,
later, reaps it (a finished child left unreaped would stay a zombie as long as the server runs).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)

_started: list[subprocess.Popen[bytes]] = []


def start_command(name: str, *args: str) -> int:
    """Start ``manage.py name args`` in a process of its own (its own session: a signal to
    the server's terminal does not stop it halfway); returns its pid."""
    _reap()
    manage = Path(settings.BASE_DIR) / "manage.py"
    process = subprocess.Popen(
        [sys.executable, str(manage), name, *args],
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
        start_new_session=True,
    )
    _started.append(process)
    logger.info("started manage.py %s %s (pid %d)", name, " ".join(args), process.pid)
    return process.pid


def _reap() -> None:
    """Forget the commands that have ended (``poll`` collects their exit status)."""
    _started[:] = [process for process in _started if process.poll() is None]


def children() -> list[subprocess.Popen[bytes]]:
    """The commands this process started that have not been reaped yet."""
    return list(_started)
