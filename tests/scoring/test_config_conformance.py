"""KubeSchedulerConfiguration validation vectors (``conformance/config-validation``).

Checked per that directory's README: ``valid`` must match; for an invalid case every expected
``field`` must be among the reported fields (case-insensitive, a trailing ``.`` ignored,
``field_older_releases`` accepted), with the expected type and, where the vector gives one, the
expected detail. Plugin-construction (``fit-*``) paths are relative and may be reported under
their full ``profiles[i].pluginConfig[j].args.`` prefix. ``fw-*`` cases are checked on ``valid``
only. ``reachable_via_v1_defaulting`` removes the errors v1 defaulting makes unreachable.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scoring.config import validate_configuration
from scoring.errors import FieldError

CASES_FILE = Path(__file__).parent / "conformance" / "config-validation" / "cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text())

# Cases whose ``reachable_via_v1_defaulting`` explanation says only some errors survive v1
# loading: the fields that survive. The others must not be reported.
SURVIVING_FIELDS = {
    # SetDefaults_NodeResourcesFitArgs turns weight 0 into 1; only memory=101 is left.
    "fit-most-multi-invalid": ["scoringStrategy.resources[1].weight"],
}

# Matched against lower-cased fields (see _norm).
_ARGS_PREFIX = re.compile(r"profiles\[\d+\]\.pluginconfig\[\d+\]\.args\.")


def _norm(field: str) -> str:
    return field.lower().rstrip(".")


def _matches(reported: str, wanted: str, relative: bool) -> bool:
    reported, wanted = _norm(reported), _norm(wanted)
    if reported == wanted:
        return True
    if relative:
        match = _ARGS_PREFIX.match(reported)
        return match is not None and reported[match.end() :] == wanted
    return False


def _accepted_fields(case: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    fields = [expected["field"]]
    if case.get("field_older_releases"):
        fields.append(case["field_older_releases"])
    return fields


def _find(
    errors: list[FieldError], case: dict[str, Any], expected: dict[str, Any]
) -> FieldError | None:
    relative = case["id"].startswith("fit-")
    for accepted in _accepted_fields(case, expected):
        for error in errors:
            if _matches(error.field, accepted, relative):
                return error
    return None


def _expected_errors(case: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(errors that must be reported, errors that v1 defaulting makes unreachable)."""
    expected = [e for e in case["expected"].get("errors", []) if "field" in e]
    reachable = case.get("reachable_via_v1_defaulting", True)
    if reachable is True:
        return expected, []
    if reachable is False:
        return [], expected
    surviving = SURVIVING_FIELDS.get(case["id"])
    assert surviving is not None, f"{case['id']}: list the errors that survive v1 defaulting"
    kept = [e for e in expected if e["field"] in surviving]
    return kept, [e for e in expected if e["field"] not in surviving]


def test_vectors_present() -> None:
    assert len(CASES) >= 20
    assert len({c["id"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    config, errors = validate_configuration(case["config"], source_name=case["id"])
    rendered = "\n".join(str(e) for e in errors)
    assert (config is not None) == case["expected"]["valid"], rendered
    assert (config is None) == bool(errors)
    if case["id"].startswith("fw-"):
        return  # framework-test fixtures: compared on validity only
    wanted, unreachable = _expected_errors(case)
    if case.get("reachable_via_v1_defaulting", True) is False:
        assert not wanted
    for expected in wanted:
        error = _find(errors, case, expected)
        assert error is not None, f"{expected['field']} not reported:\n{rendered}"
        types = {expected["type"], *expected.get("type_alternatives", [])}
        assert error.type in types, (error, expected)
        if "detail" in expected:
            assert error.detail == expected["detail"], (error, expected)
    for expected in unreachable:
        assert _find(errors, case, expected) is None, f"{expected['field']} is unreachable"
