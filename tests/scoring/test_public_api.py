"""The engine's public API is the names ``scoring`` exports, each documented in one place."""

from __future__ import annotations

import re
from pathlib import Path

import scoring

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine-api.md"


def test_every_public_name_is_exported_and_documented() -> None:
    documented = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", DOC.read_text()))
    assert [name for name in scoring.__all__ if name not in documented] == []
    assert all(hasattr(scoring, name) for name in scoring.__all__)


def test_the_document_names_nothing_the_package_does_not_export() -> None:
    """Every name in the document's tables is exported (a rename updates both)."""
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| `")]
    named = {
        n for row in rows for n in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row.split("|")[1])
    }
    assert sorted(named - set(scoring.__all__)) == []
