"""koord-descheduler's configuration as read from each cluster, LowNodeLoad's dry run on the
newest snapshot, and the coherence findings of the load-aware stack."""

from __future__ import annotations

from typing import Any

import django_filters
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts.roles import IsViewer
from policy.api.strict import ModelSerializer
from policy.clusters.models import Cluster
from policy.decisions import descheduling
from policy.policies import descheduler
from policy.policies.models import DeschedulerConfiguration
from scoring.descheduler.args import LowNodeLoadArgs


def _args_summary(args: LowNodeLoadArgs | None) -> dict[str, Any] | None:
    """LowNodeLoad's args as koord-descheduler runs them (defaulted, pools converted)."""
    if args is None:
        return None
    return {
        "paused": args.paused,
        "dry_run": args.dry_run,
        "number_of_nodes": args.number_of_nodes,
        "node_metric_expiration_seconds": args.node_metric_expiration_seconds,
        "node_fit": args.node_fit,
        "evictable_namespaces": {
            "include": list(args.evictable_include),
            "exclude": list(args.evictable_exclude),
        },
        "node_pools": [
            {
                "name": pool.name,
                "node_selector": pool.node_selector,
                "use_deviation_thresholds": pool.use_deviation_thresholds,
                "low_thresholds": pool.low,
                "high_thresholds": pool.high,
                "prod_low_thresholds": pool.prod_low,
                "prod_high_thresholds": pool.prod_high,
                "resource_weights": dict(pool.resource_weights),
                "anomaly_condition": {
                    "timeout_seconds": pool.anomaly.timeout / 10**9,
                    "consecutive_abnormalities": pool.anomaly.consecutive_abnormalities,
                    "consecutive_normalities": pool.anomaly.consecutive_normalities,
                },
            }
            for pool in args.node_pools
        ],
    }


class DeschedulerConfigurationSerializer(ModelSerializer[DeschedulerConfiguration]):
    valid = serializers.SerializerMethodField()
    validation_errors = serializers.SerializerMethodField(
        help_text="Why koord-descheduler would refuse it: field, rule and detail."
    )
    lownodeload_enabled = serializers.SerializerMethodField()
    lownodeload = serializers.SerializerMethodField(
        help_text="LowNodeLoad's args as koord-descheduler runs them: defaulted, the top-level "
        "thresholds as the first pool __default_node_pool__, pools inheriting what they omit."
    )

    class Meta:
        model = DeschedulerConfiguration
        fields = [
            "id",
            "cluster",
            "configmap",
            "source",
            "read_at",
            "version",
            "created",
            "updated",
            "valid",
            "validation_errors",
            "lownodeload_enabled",
            "lownodeload",
        ]
        read_only_fields = fields

    def _parsed(self, obj: DeschedulerConfiguration) -> descheduler.ParsedDescheduler:
        cache: dict[int, descheduler.ParsedDescheduler] = self.__dict__.setdefault(
            "_parsed_rows", {}
        )
        if obj.pk not in cache:
            cache[obj.pk] = descheduler.parse_descheduler(obj)
        return cache[obj.pk]

    def get_valid(self, obj: DeschedulerConfiguration) -> bool:
        return self._parsed(obj).valid

    def get_validation_errors(self, obj: DeschedulerConfiguration) -> list[dict[str, str]]:
        parsed = self._parsed(obj)
        errors = [e.to_dict() for e in parsed.errors]
        if parsed.unreadable:
            errors.append({"field": "", "type": "Unreadable", "detail": parsed.unreadable})
        return errors

    def get_lownodeload_enabled(self, obj: DeschedulerConfiguration) -> bool:
        config = self._parsed(obj).config
        return bool(config and config.lownodeload_enabled)

    def get_lownodeload(self, obj: DeschedulerConfiguration) -> dict[str, Any] | None:
        config = self._parsed(obj).config
        return _args_summary(config.lownodeload if config else None)


class DeschedulerConfigurationFilterSet(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all())

    class Meta:
        model = DeschedulerConfiguration
        fields = ["cluster"]


class DeschedulerRenderSerializer(serializers.Serializer[Any]):
    namespace = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField()
    text = serializers.CharField(help_text="The ConfigMap key's text, exactly as stored.")


class DeschedulerConfigurationViewSet(viewsets.ReadOnlyModelViewSet[DeschedulerConfiguration]):
    """koord-descheduler's configuration of each cluster, read from its ConfigMap on refresh
    and kept as written."""

    queryset = DeschedulerConfiguration.objects.select_related("cluster")
    serializer_class = DeschedulerConfigurationSerializer
    filterset_class = DeschedulerConfigurationFilterSet
    permission_classes = [IsViewer]
    ordering_fields = ["id", "updated"]
    ordering = ["cluster__name"]

    @extend_schema(responses=DeschedulerRenderSerializer)
    @action(detail=True, methods=["get"], url_path="render", url_name="render")
    def render(self, request: Request, pk: str | None = None) -> Response:
        """What the ConfigMap key holds: the stored text, unchanged."""
        row = self.get_object()
        cluster = row.cluster
        body = {
            "namespace": cluster.descheduler_config_namespace,
            "name": cluster.descheduler_config_name,
            "key": cluster.descheduler_config_key,
            "text": row.source,
        }
        return Response(DeschedulerRenderSerializer(body).data)


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
