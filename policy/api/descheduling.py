"""LowNodeLoad's dry run on the newest snapshot, and the coherence findings of the load-aware
stack."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts.roles import IsViewer
from policy.clusters.models import Cluster
from policy.decisions import descheduling
from scoring import InputError


class UnreadableSnapshot(exceptions.APIException):
    status_code = 422
    default_code = "unreadable_snapshot"


class _ClusterReport(APIView):
    permission_classes = [IsViewer]

    def report(self, cluster: Cluster) -> dict[str, Any]:
        raise NotImplementedError

    def get(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        try:
            return Response(self.report(cluster))
        except descheduling.NoSnapshot as exc:
            raise NotFound(str(exc)) from None
        except InputError as exc:
            raise UnreadableSnapshot(f"the newest snapshot cannot be read: {exc}") from None


class LowNodeLoadView(_ClusterReport):
    @extend_schema(
        responses=OpenApiResponse(
            description="Per node of the newest snapshot: over/under/normal with usage, "
            "allocatable and thresholds as LowNodeLoad computes them; the pods one round would "
            "evict, in order, and where the scheduler would place each now; the coherence "
            "findings."
        )
    )
    def get(self, request: Request, pk: int) -> Response:
        return super().get(request, pk)

    def report(self, cluster: Cluster) -> dict[str, Any]:
        return descheduling.lownodeload_report(cluster)


class CoherenceView(_ClusterReport):
    @extend_schema(
        responses=OpenApiResponse(
            description="Contradictions between LoadAware, LowNodeLoad and koordlet: each "
            "finding names its rule, the values with their fields and sources, and the nodes."
        )
    )
    def get(self, request: Request, pk: int) -> Response:
        return super().get(request, pk)

    def report(self, cluster: Cluster) -> dict[str, Any]:
        return descheduling.coherence_report(cluster)
