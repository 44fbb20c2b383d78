"""Helpers shared by the page tests (``test_pages_*``); no tests of its own."""

from __future__ import annotations

from typing import Any

import pytest

from policy import models as policy_models
from policy.engine import clear_caches as clear_engine_caches
from policy.models import Cluster
from policy.views.support import clear_caches as clear_page_caches

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests: {{cpu: "{cpu}", memory: {memory}}}
"""


def pod_yaml(
    name: str = "web-1", namespace: str = "default", cpu: str = "1", memory: str = "1Gi"
) -> str:
    return POD_YAML.format(name=name, namespace=namespace, cpu=cpu, memory=memory)


@pytest.fixture
def fresh_caches() -> None:
    """Snapshot ids are reused across test databases: forget what other tests built."""
    clear_engine_caches()
    clear_page_caches()


def loadaware_configuration(cluster: Cluster, **args: Any) -> Any:
    """A scheduler configuration whose only profile enables LoadAwareScheduling (with ``args``
    when given); skips the test while the configuration models do not exist."""
    configurations = getattr(policy_models, "SchedulerConfiguration", None)
    profiles = getattr(policy_models, "SchedulerProfile", None)
    if configurations is None or profiles is None:
        pytest.skip("scheduler configuration models do not exist yet")
    configuration = configurations.objects.create(cluster=cluster)
    profile = profiles.objects.create(
        configuration=configuration,
        scheduler_name="",
        plugins={"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
    )
    if args:
        policy_models.LoadAwareSchedulingArgs.objects.create(profile=profile, **args)
    clear_page_caches()
    return configuration
