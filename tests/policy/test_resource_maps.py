"""``map[ResourceName]int64`` fields have one rule, whichever way a map arrives: the API, an
editor's form or the ORM give the same verdict and the same message."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.core.exceptions import ValidationError
from rest_framework.exceptions import ValidationError as ApiValidationError

from policy.api.policies.serializers import ResourceMapField as ApiField
from policy.core.validators import resource_map_validator
from policy.web.forms.policies import ResourceMapField as FormField

BAD: dict[str, Any] = {
    "not an integer": {"cpu": "lots"},
    "a float": {"cpu": 1.5},
    "beyond int64": {"cpu": 2**63},
    "an empty name": {"": 1},
    "a long name": {"x" * 254: 1},
    "a NUL in a name": {"c\x00pu": 1},
    "not a resource name": {"cpu memory": 1},
    "a bad prefix": {"Example.com/gpu": 1},
    "too many": {f"example.com/r{i}": 1 for i in range(65)},
}


def model_error(value: Any) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        resource_map_validator(value)
    return caught.value.messages


def api_error(value: Any) -> list[str]:
    with pytest.raises(ApiValidationError) as caught:
        ApiField().to_internal_value(value)
    return [str(message) for message in caught.value.detail]


def form_error(value: Any) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        FormField().to_python(yaml.safe_dump(value, allow_unicode=False))
    return caught.value.messages


@pytest.mark.parametrize("value", list(BAD.values()), ids=list(BAD))
def test_every_entry_point_refuses_with_the_same_message(value: dict[str, Any]) -> None:
    expected = model_error(value)
    assert expected and form_error(value) == expected
    if not any(isinstance(v, float | str) for v in value.values()):
        # The API's integer field reads "5" or 1.0 as numbers first, as DRF does everywhere.
        assert api_error(value) == expected


@pytest.mark.parametrize(
    "value",
    [{}, {"cpu": 65, "memory": 95}, {"nvidia.com/gpu": 0}, {"kubernetes.io/batch-cpu": 1}],
)
def test_good_maps_pass_everywhere(value: dict[str, int]) -> None:
    resource_map_validator(value)
    assert ApiField().to_internal_value(value) == value
    assert FormField().to_python(yaml.safe_dump(value)) == value


def rows_error(value: dict[str, Any]) -> list[str]:
    """The editor's rows: one resource and its number (as text) per row."""
    with pytest.raises(ValidationError) as caught:
        FormField().to_python([(name, str(number)) for name, number in value.items()])
    return caught.value.messages


# An empty name is a row without a resource (its own message); a float is typed as text.
ROW_CASES = [case for case in BAD if case not in ("an empty name", "a float")]


@pytest.mark.parametrize("case", ROW_CASES)
def test_the_editors_rows_refuse_with_the_same_message(case: str) -> None:
    assert rows_error(BAD[case]) == model_error(BAD[case])


def test_good_rows_give_the_same_map() -> None:
    value = {"cpu": 65, "memory": 95, "nvidia.com/gpu": 0, "kubernetes.io/batch-cpu": 1}
    rows = [(name, str(number)) for name, number in value.items()]
    assert FormField().to_python(rows) == value
    assert FormField().to_python([*rows, ("", ""), ("  ", " ")]) == value
    assert FormField().to_python([("", "")]) is None
