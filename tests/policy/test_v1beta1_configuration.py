"""A cluster running Kubernetes 1.20 keeps its scheduler's v1beta1 document as written and is
evaluated with 1.20's scorers under their own names (docs/scheduler-targets.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchmarks.deployment import pod
from policy.accounts.changes import ChangeContext
from policy.clusters.models import Cluster
from policy.clusters.services import record_snapshot
from policy.core.choices import ChangeSource
from policy.decisions import evaluation
from policy.policies import services as policies
from scoring.synthetic import generate_cluster

V1BETA1 = """apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: NodeResourcesLeastAllocated}]
      enabled: [{name: NodeResourcesMostAllocated, weight: 2}]
"""


def _cluster(version: str) -> Cluster:
    return Cluster.objects.create(
        name=f"k8s-{version}",
        kind="demo",
        scheduler_flavor="kube-scheduler",
        scheduler_version=version,
    )


def _import(cluster: Cluster) -> object:
    context = ChangeContext(user=None, source=ChangeSource.API)
    service = policies.SchedulerConfigurationService()
    return service.import_document(cluster, V1BETA1, context, expected_version=None)[0]


@pytest.mark.django_db
def test_a_v1beta1_document_is_kept_and_scores_as_1_20_does() -> None:
    cluster = _cluster("1.20")
    configuration = _import(cluster)
    written = configuration.written_document()  # type: ignore[attr-defined]
    assert written["apiVersion"] == "kubescheduler.config.k8s.io/v1beta1"
    assert written["profiles"][0]["plugins"]["score"]["enabled"] == [
        {"name": "NodeResourcesMostAllocated", "weight": 2}
    ]
    taken = datetime(2026, 11, 28, 1, 0, tzinfo=UTC)
    record_snapshot(cluster, generate_cluster(nodes=6, seed=3, now=taken), taken)
    answer = evaluation.run(cluster, pod(1), page=(0, 1))
    scores = answer.page["explanation"]["nodes"][0]["scores"]
    assert {"plugin": "NodeResourcesMostAllocated", "weight": 2} in [
        {"plugin": s["plugin"], "weight": s["weight"]} for s in scores
    ]
    assert "NodeResourcesLeastAllocated" not in [s["plugin"] for s in scores]


@pytest.mark.django_db
def test_a_release_that_cannot_read_v1beta1_refuses_it_naming_the_version() -> None:
    with pytest.raises(policies.PolicyInvalid) as refused:
        _import(_cluster("1.28"))
    assert "v1beta1" in str(refused.value.errors)
