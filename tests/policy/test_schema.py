"""The OpenAPI schema generates without warnings and validates."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_openapi_schema_is_valid_and_warning_free(tmp_path: Path) -> None:
    target = tmp_path / "schema.yaml"
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(target), stderr=StringIO()
    )
    text = target.read_text()
    assert "tokenAuth" in text and "/api/v1/tokens/" in text
