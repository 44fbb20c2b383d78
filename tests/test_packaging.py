"""The image installs pinned dependencies: requirements.lock pins every run-time dependency
of pyproject.toml at a version its range allows (scripts/lock rewrites it)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not pinned: {line}"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_dependency_is_pinned_within_its_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = pinned()
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in requirements.lock: run scripts/lock"
        assert requirement.specifier.contains(pins[name]), (name, pins[name], str(requirement))


def test_the_image_installs_the_lock_file_before_the_code() -> None:
    steps = (ROOT / "Dockerfile").read_text().splitlines()
    install = steps.index("RUN pip install -r requirements.lock")
    first_code = next(i for i, step in enumerate(steps) if step.startswith("COPY config"))
    assert install < first_code
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert "requirements.lock" not in [line.strip() for line in ignored]
