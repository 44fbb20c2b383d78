"""Settings come from the environment and fail loudly, naming the variable and the rule."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("X", "X_FILE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("raw", "expected"), [("1", True), ("TRUE", True), ("on", True), ("no", False), ("0", False)]
)
def test_env_bool(environ: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    environ.setenv("X", raw)
    assert env.env_bool("X", not expected) is expected


def test_unset_or_empty_means_default(environ: pytest.MonkeyPatch) -> None:
    assert env.env_bool("X", True) is True
    environ.setenv("X", "  ")
    assert env.env_int("X", 5) == 5
    assert env.env_list("X", ["a"]) == ["a"]


def test_env_bool_rejects_other_words(environ: pytest.MonkeyPatch) -> None:
    environ.setenv("X", "maybe")
    with pytest.raises(ImproperlyConfigured, match=r"X='maybe' is not a boolean"):
        env.env_bool("X", False)


def test_env_int(environ: pytest.MonkeyPatch) -> None:
    environ.setenv("X", "12")
    assert env.env_int("X", 1, minimum=1) == 12
    environ.setenv("X", "0")
    with pytest.raises(ImproperlyConfigured, match="X=0 must be >= 1"):
        env.env_int("X", 1, minimum=1)
    environ.setenv("X", "ten")
    with pytest.raises(ImproperlyConfigured, match="X='ten' is not an integer"):
        env.env_int("X", 1)


def test_env_list(environ: pytest.MonkeyPatch) -> None:
    environ.setenv("X", "a.example, b.example,,")
    assert env.env_list("X") == ["a.example", "b.example"]


def test_env_choice(environ: pytest.MonkeyPatch) -> None:
    environ.setenv("X", "debug")
    assert env.env_choice("X", ["DEBUG", "INFO"], "INFO") == "DEBUG"
    environ.setenv("X", "loud")
    with pytest.raises(ImproperlyConfigured, match="X='loud' must be one of DEBUG, INFO"):
        env.env_choice("X", ["DEBUG", "INFO"], "INFO")


def test_env_url_checks_the_scheme(environ: pytest.MonkeyPatch) -> None:
    environ.setenv("X", "mysql://db/x")
    with pytest.raises(ImproperlyConfigured, match="X must be a URL with scheme postgres"):
        env.env_url("X", ["postgres"])
    environ.setenv("X", "postgres://db/x")
    assert env.env_url("X", ["postgres"]) == "postgres://db/x"


def test_env_secret_from_file(environ: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    environ.setenv("X_FILE", str(secret))
    assert env.env_secret("X") == "s3cret"
    environ.setenv("X", "inline")
    with pytest.raises(ImproperlyConfigured, match="set X or X_FILE, not both"):
        env.env_secret("X")
    environ.delenv("X")
    environ.setenv("X_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match=r"X_FILE=.* cannot be read"):
        env.env_secret("X")


def load_settings(**variables: str) -> subprocess.CompletedProcess[str]:
    """Import config.settings in a fresh interpreter with only ``variables`` set."""
    environment = {"PATH": os.environ.get("PATH", ""), **variables}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import config.settings as s; "
            "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER)",
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_defaults_need_nothing() -> None:
    result = load_settings()
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "True"]


def test_broker_turns_eager_off() -> None:
    result = load_settings(
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
        DATABASE_URL="postgres://u@db.example/schedboard",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.postgresql", "False"]


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"DEBUG": "false"}, "SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG is false"),
        (
            {"DEBUG": "false", "SECRET_KEY": "k" * 50},
            "ALLOWED_HOSTS is required when DEBUG is false",
        ),
        ({"DEBUG": "nope"}, "DEBUG='nope' is not a boolean"),
        ({"DATABASE_URL": "mysql://db/x"}, "DATABASE_URL must be a URL with scheme"),
        ({"CELERY_BROKER_URL": "127.0.0.1:6379"}, "CELERY_BROKER_URL must be a URL with scheme"),
        ({"SNAPSHOT_RETENTION": "0"}, "SNAPSHOT_RETENTION=0 must be >= 1"),
    ],
)
def test_bad_values_fail_at_start_up(variables: dict[str, str], message: str) -> None:
    result = load_settings(**variables)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_production_settings() -> None:
    result = load_settings(DEBUG="false", SECRET_KEY="k" * 50, ALLOWED_HOSTS="sched.example")
    assert result.returncode == 0, result.stderr


def test_the_beat_schedule_is_the_settings_one_and_names_real_tasks() -> None:
    """One beat schedule (CELERY_BEAT_SCHEDULE): every entry is a registered task that expires
    before its next run, so a run missed while the workers were down is not queued up."""
    from django.conf import settings

    from config.celery import app

    app.loader.import_default_modules()
    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE
    assert {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()} >= {
        "policy.tasks.prune_snapshots_task",
        "policy.tasks.apply_time_windows",
        "policy.tasks.recover_sync_jobs",
        "policy.tasks.recover_what_ifs",
    }
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks
        assert 0 < entry["options"]["expires"] < entry["schedule"]


@pytest.mark.parametrize("raw", ["120", "120/fortnight", "0/minute", "-1/second", "1.5/day"])
def test_env_rate_refuses_what_is_not_a_rate(environ: pytest.MonkeyPatch, raw: str) -> None:
    environ.setenv("X", raw)
    with pytest.raises(ImproperlyConfigured, match=r"X='.*' is not a rate: write N/second"):
        env.env_rate("X", "1/minute")


def test_env_rate_reads_a_rate(environ: pytest.MonkeyPatch) -> None:
    assert env.env_rate("X", "5/hour") == "5/hour"
    environ.setenv("X", "30/minute")
    assert env.env_rate("X", "5/hour") == "30/minute"
