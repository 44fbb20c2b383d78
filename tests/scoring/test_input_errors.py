"""A YAML error names the input it is in (the pod, the configuration), not PyYAML's
``<unicode string>``, with the line and column."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from scoring.inputs import load_yaml

BROKEN = "metadata:\n  name: [web\nspec: {}\n"


def test_a_yaml_error_names_its_source_and_where() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(BROKEN, source="pod")
    message = str(caught.value)
    assert 'in "pod", line 2' in message
    assert "<unicode string>" not in message


@pytest.mark.django_db
def test_the_evaluate_api_quotes_the_pod_not_unicode_string(
    api_client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(viewer)
    url = f"/api/v1/clusters/{demo_snapshot.cluster_id}/evaluate/"
    response = api_client.post(url, {"pod": BROKEN}, format="json")
    assert response.status_code == 400, response.content
    text = response.content.decode()
    assert 'in \\"pod\\", line 2' in text and "unicode string" not in text
