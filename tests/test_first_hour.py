"""The first hour on a laptop: ``scripts/run`` on another port, and no broker warning when no
broker is configured."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "PORT")}
    return {**env, **extra}


def test_sending_a_task_without_a_broker_warns_of_nothing() -> None:
    """Eager tasks still take a producer from Celery's pool; it must not reach for amqp."""
    script = (
        "import os, django\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'\n"
        "django.setup()\n"
        "from config.celery import app\n"
        "assert app.conf.task_always_eager\n"
        "def probe():\n"
        "    return 'pong'\n"
        "probe = app.task(name='probe')(probe)\n"
        "print(probe.apply_async().get())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=_environ(LOG_LEVEL="DEBUG"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("pong")
    assert "No hostname was supplied" not in done.stderr + done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_run_refuses_a_port_in_use_before_migrating(tmp_path: Path) -> None:
    database = tmp_path / "never.sqlite3"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(ROOT / "scripts" / "run"), "--port", str(port)],
            env=_environ(DATABASE_URL=f"sqlite:///{database}"),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in done.stderr
    assert "migrating" not in done.stdout and not database.exists()


@pytest.mark.parametrize("how", ["PORT", "--port"])
def test_run_rejects_a_port_that_is_not_one(how: str) -> None:
    args, extra = ([], {"PORT": "80x"}) if how == "PORT" else (["--port", "0"], {})
    done = subprocess.run(
        [str(ROOT / "scripts" / "run"), *args],
        env=_environ(**extra),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a number from 1 to 65535" in done.stderr


def test_run_serves_on_port_and_prints_its_url(tmp_path: Path) -> None:
    """``PORT=N scripts/run`` migrates a fresh database, prints http://127.0.0.1:N/ for the
    login and the server, and answers there."""
    port = _free_port()
    # ensure_admin keeps a new admin's password in the checkout's var/: put back what was there.
    password_file = ROOT / "var" / "admin-password"
    kept = password_file.read_bytes() if password_file.exists() else None
    run = subprocess.Popen(
        [str(ROOT / "scripts" / "run")],
        env=_environ(
            PORT=str(port),
            DATABASE_URL=f"sqlite:///{tmp_path / 'run.sqlite3'}",
            SCHEDBOARD_ADMIN_PASSWORD="first-hour-pw",
            PYTHONUNBUFFERED="1",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    lines: list[str] = []
    try:
        assert run.stdout is not None
        for line in run.stdout:  # blocks on the script's own output: no sleeping
            lines.append(line)
            if "Starting development server" in line or "Quit the server with" in line:
                break
        output = "".join(lines)
        assert f"Log in at {url}accounts/login/" in output, output
        assert f"starting the server on {url}" in output, output
        from urllib.request import urlopen

        with urlopen(f"{url}healthz", timeout=30) as answer:
            assert answer.status == 200
    finally:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait(timeout=60)
        if kept is None:
            password_file.unlink(missing_ok=True)
        else:
            password_file.write_bytes(kept)
