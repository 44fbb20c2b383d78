"""The engine stays framework-free: importing it never pulls in Django."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("module", ["scoring", "scoring.synthetic", "scoring.quantity"])
def test_importing_the_engine_does_not_import_django(module: str) -> None:
    probe = (
        f"import sys, json, {module}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'celery', 'policy', 'config'})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(result.stdout) == []
