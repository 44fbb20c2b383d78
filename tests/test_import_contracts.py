"""The import contracts in pyproject.toml (``lint-imports``, run by scripts/test) hold, and
they catch what they are for: a planted framework import anywhere in ``scoring/``, even one
hidden inside a function, breaks the engine's contract; an app module importing an engine
module instead of a name ``scoring`` exports breaks the public-API contract."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scoring", "policy", "config")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """Run the project's contracts over the packages in ``tree`` (its own copy of them)."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command as c; c()",
            "--no-cache",
        ],
        cwd=tree,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the project's packages and contracts."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n\ndef _planted() -> None:\n    {line}\n")


def test_the_contracts_hold(tree: Path) -> None:
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # the engine stays a pure library
        ("scoring/engine.py", "import django.conf", "The engine is a pure library"),
        ("scoring/plugins/loadaware/thresholds.py", "from policy import models", "pure library"),
        ("scoring/__init__.py", "import kubernetes.client", "The engine is a pure library"),
        ("scoring/simulation/metrics.py", "import celery", "The engine is a pure library"),
        # the app reaching past the engine's public API
        ("policy/web/pages.py", "from scoring.engine import Engine", "only through its public API"),
        ("policy/decisions/models/decisions.py", "import scoring.decision_codec", "public API"),
        ("config/settings.py", "from scoring.plugins.loadaware import args", "public API"),
        # a domain reaching up into the pages
        ("policy/clusters/models/clusters.py", "from policy.web import pages", "Layers"),
        # a service importing the Celery entry points instead of enqueuing by name
        ("policy/sync/jobs.py", "from policy import tasks", "Layers"),
        # sibling domains
        ("policy/accounts/changes.py", "from policy.clusters import engine", "independent"),
        # a migration running the live engine code, which may change after it was written
        (
            "policy/migrations/0017_compact_decisions.py",
            "from scoring import decision_codec",
            "Migrations run code of their own",
        ),
        # a circle inside one domain: the models import the documents, which import them back
        ("policy/policies/documents.py", "from policy.policies import models", "No import circles"),
        # a circle inside the engine
        ("scoring/podresources.py", "from scoring import objects", "No import circles"),
    ],
)
def test_a_planted_import_breaks_its_contract(
    tree: Path, module: str, line: str, contract: str
) -> None:
    """Even inside a function: the broken contract names the importing module."""
    plant(tree / module, line)
    result = lint_imports(tree)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken, result.stdout
    source = module.removesuffix(".py").removesuffix("/__init__").rsplit("/", 1)[-1]
    assert f"{source} -> " in broken, result.stdout  # circles name modules relative
