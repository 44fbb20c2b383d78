"""Views of the clusters API: connect and configure clusters, and what their policies render to."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from policy.accounts.rate_limits import EvaluateThrottle
from policy.accounts.roles import CanConfigureCluster, IsViewer
from policy.api import viewsets
from policy.api.clusters.serializers import (
    ClusterSerializer,
    ColocationRenderSerializer,
    ConnectClusterSerializer,
    ConnectedClusterSerializer,
    NodeThresholdRenderSerializer,
)
from policy.clusters.filters import ClusterFilterSet
from policy.clusters.gateway.errors import GatewayError
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.policies import rendering
from policy.policies import services as policies
from policy.sync.connect import Connected, add_cluster
from policy.sync.thresholds_in_force import thresholds_in_force
from policy.web import sweep
from scoring import ANNOTATION_USAGE_THRESHOLDS


@extend_schema_view(
    create=extend_schema(
        request=ConnectClusterSerializer,
        responses={201: ConnectedClusterSerializer},
        description="Connect a cluster (superusers): reach its API server, find the scheduler's "
        "ConfigMap in the usual places unless given, check schedboard's permissions there, and "
        "store it. Nothing is written to the cluster. An unreachable server is a 400 naming "
        "the connection fields.",
    ),
    node_thresholds=extend_schema(
        parameters=[viewsets.AT_PARAMETER],
        responses=NodeThresholdRenderSerializer,
        description="Per node of the newest snapshot: the scheduling.koordinator.sh/usage-"
        "thresholds annotation value the node threshold policies give it, and which policy won.",
    ),
    colocation_config=extend_schema(
        responses=ColocationRenderSerializer,
        description="The colocation-config content of Koordinator's slo-controller ConfigMap "
        "that the NodeMetric collect policies produce.",
    ),
)
class ClusterViewSet(
    mixins.ListModelMixin,
    viewsets.UpdateMixin[Cluster],
    viewsets.HistoryMixin[Cluster],
):
    """Clusters with their newest snapshot's counts; operators set where and when policies
    are pushed (PUT/PATCH with If-Match)."""

    queryset = Cluster.objects.prefetch_related(
        Prefetch("snapshots", ClusterSnapshot.snapshots.summaries(), to_attr="snapshot_list")
    )
    serializer_class = ClusterSerializer
    filterset_class = ClusterFilterSet
    ordering_fields = ["name", "kind", "created", "updated"]
    ordering = ["name"]
    permission_classes = [CanConfigureCluster]
    service = policies.ClusterService()

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not request.user.is_superuser:
            raise PermissionDenied("Connecting a cluster needs a superuser.")
        serializer = ConnectClusterSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            connected: Connected = self._call(
                None,
                data,
                lambda: add_cluster(
                    data["name"],
                    kind=data["kind"],
                    ctx=self._context(),
                    kubeconfig_path=data["kubeconfig_path"],
                    context=data["kubeconfig_context"],
                    scheduler_configmap=data["scheduler_configmap"],
                    descheduler_configmap=data["descheduler_configmap"],
                ),
            )
        except GatewayError as exc:
            raise serializers.ValidationError(
                {"kubeconfig_path": [f"cannot connect: {exc}"]}
            ) from None
        cluster = connected.cluster
        cluster.connection = {  # type: ignore[attr-defined]
            "server_version": connected.server_version,
            "scheduler_configmap": str(connected.scheduler_configmap),
            "discovered": connected.discovered,
            "missing_permissions": [str(access) for access in connected.missing],
        }
        body = ConnectedClusterSerializer(cluster, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"ETag": cluster.etag})

    validated_reads = ("node_thresholds",)

    @action(
        detail=True,
        methods=["get"],
        url_path="node-thresholds/render",
        url_name="node-thresholds-render",
        permission_classes=[IsViewer],
    )
    def node_thresholds(self, request: Request, pk: str | None = None) -> Response:
        cluster = self.get_object()
        at = viewsets.parse_at(request)
        try:
            stored, local, rows = thresholds_in_force(cluster, at)
        except rendering.NoSnapshot as exc:
            raise NotFound(str(exc)) from None
        body = {
            "cluster": cluster.pk,
            "snapshot": {"id": stored.pk, "taken_at": stored.taken_at},
            "at": local.isoformat(),
            "annotation": ANNOTATION_USAGE_THRESHOLDS,
            "nodes": [
                {
                    "node": row.node,
                    "value": row.desired,
                    "policy": (
                        {
                            "id": row.policy.pk,
                            "name": row.policy.name,
                            "priority": row.policy.priority,
                        }
                        if row.policy
                        else None
                    ),
                    "matching": list(row.matching),
                    **row.as_dict(),
                }
                for row in rows
            ],
        }
        return Response(NodeThresholdRenderSerializer(body).data)

    @action(
        detail=True,
        methods=["get"],
        url_path="colocation-config/render",
        url_name="colocation-config-render",
        permission_classes=[IsViewer],
    )
    def colocation_config(self, request: Request, pk: str | None = None) -> Response:
        cluster = self.get_object()
        content = rendering.colocation_config(cluster)
        body = {
            "namespace": cluster.slo_config_namespace,
            "name": cluster.slo_config_name,
            "key": rendering.COLOCATION_KEY,
            "content": content,
            "text": json.dumps(content, indent=2, sort_keys=True) + "\n",
            "notes": [rendering.COLOCATION_NOTE],
        }
        return Response(ColocationRenderSerializer(body).data)

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            200: OpenApiResponse(
                response=OpenApiTypes.OBJECT,
                description="`rows`: per threshold from `from` to `to` by `step`, the nodes the "
                'load filter refuses (`filtered`, as the dashboard\'s "filtered now"), the '
                "pending pods the profile can place and, with `pool_label`, the refused nodes "
                "per pool; `current`: the same at the threshold in force; `recommendation`: "
                "per pool, a threshold from the load recorded over the retained snapshots and "
                "how it was derived (docs/advisor.md).",
            ),
            400: OpenApiResponse(
                description="A field out of range, an unknown profile or "
                "resource, or no snapshot; the body names the field."
            ),
            429: OpenApiResponse(description="Over API_EVALUATE_RATE (see Retry-After)."),
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="loadaware-sweep",
        url_name="loadaware-sweep",
        permission_classes=[IsViewer],
        throttle_classes=[EvaluateThrottle],
    )
    def loadaware_sweep(self, request: Request, pk: str | None = None) -> Response:
        """Sweep one LoadAware threshold of a profile (body: profile, resource, from, to,
        step, pool_label) on the newest snapshot; nothing is saved."""
        cluster = self.get_object()
        try:
            return Response(sweep.sweep(cluster, request.data))
        except sweep.SweepInvalid as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
