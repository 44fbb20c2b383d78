"""Every domain has the shape docs/architecture.md describes, so the next one can copy any."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.apps import apps

import policy.models

ROOT = Path(__file__).resolve().parent.parent / "policy"
DOMAINS = ("accounts", "clusters", "policies", "sync", "decisions")


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_has_its_models_services_and_filters(domain: str) -> None:
    package = ROOT / domain
    assert (package / "models" / "__init__.py").is_file(), "models is a package"
    assert (package / "services.py").is_file(), "use cases live in services.py"
    assert (package / "filters.py").is_file(), "FilterSets live in filters.py"


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_has_its_api_package(domain: str) -> None:
    package = ROOT / "api" / domain
    assert {"serializers.py", "views.py"} <= {path.name for path in package.glob("*.py")}


def test_every_model_lives_in_a_domain_and_is_registered() -> None:
    """No data in the page or API layer; the registry names every model Django knows."""
    models = list(apps.get_app_config("policy").get_models())
    outside = [
        model.__name__
        for model in models
        if not any(model.__module__.startswith(f"policy.{d}.models") for d in DOMAINS)
    ]
    assert outside == []
    assert sorted(policy.models.__all__) == sorted(model.__name__ for model in models)
