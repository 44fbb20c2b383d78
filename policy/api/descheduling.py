"""koord-descheduler's configuration as read from each cluster, LowNodeLoad's dry run on the
newest snapshot, and the coherence findings of the load-aware stack."""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts.changes import ChangeContext
from policy.accounts.models import PolicyChange
from policy.accounts.roles import CanEditPolicy, IsViewer
from policy.api import concurrency
from policy.api.errors import PolicyValidationError
from policy.api.strict import ModelSerializer, StrictCharField
from policy.clusters.models import Cluster
from policy.decisions import descheduling
from policy.policies import descheduler
from policy.policies.filters import DeschedulerConfigurationFilterSet
from policy.policies.models import DeschedulerConfiguration
from scoring import TYPE_INVALID, InputError, LowNodeLoadArgs


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


class DeschedulerRenderSerializer(serializers.Serializer[Any]):
    namespace = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField()
    text = serializers.CharField(help_text="The ConfigMap key's text, exactly as stored.")


class DeschedulerImportSerializer(serializers.Serializer[Any]):
    cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    document = StrictCharField(
        max_length=1_000_000, trim_whitespace=False, help_text="The document, YAML or JSON."
    )


class LowNodeLoadArgsSerializer(serializers.Serializer[Any]):
    configuration = serializers.IntegerField()
    version = serializers.IntegerField()
    edited = serializers.BooleanField(help_text="Changed here and not pushed yet.")
    args = serializers.JSONField(help_text="LowNodeLoad's args as written in the document.")


def _args_body(row: DeschedulerConfiguration) -> dict[str, Any]:
    return {
        "configuration": row.pk,
        "version": row.version,
        "edited": row.edited,
        "args": descheduler.lownodeload_args(row),
    }


class DeschedulerEditMixin(viewsets.GenericViewSet[DeschedulerConfiguration]):
    """``lownodeload-args/``: LowNodeLoad's args as written; PATCH (editors, If-Match) merges
    a JSON merge patch into them, validated as koord-descheduler loads the document; only the
    patched leaves change, and the next push writes the document. ``history/``."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses=LowNodeLoadArgsSerializer)
    @action(
        detail=True,
        methods=["get", "patch"],
        url_path="lownodeload-args",
        url_name="lownodeload-args",
        permission_classes=[CanEditPolicy],
    )
    def lownodeload_args(self, request: Request, pk: str | None = None) -> Response:
        row = self.get_object()
        if request.method == "PATCH":
            if not isinstance(request.data, dict):
                raise PolicyValidationError(
                    {"errors": [{"field": "", "type": TYPE_INVALID,
                                 "detail": "expected a JSON object of LowNodeLoadArgs fields"}]}
                )  # fmt: skip
            expected = concurrency.expected_version(request, row.version)
            try:
                row = descheduler.edit_lownodeload_args(
                    row.pk, request.data, expected, ChangeContext.from_request(request)
                )
            except descheduler.StaleVersion as exc:
                raise concurrency.stale(exc.current) from None
            except descheduler.EditInvalid as exc:
                raise PolicyValidationError({"errors": [e.to_dict() for e in exc.errors]}) from None
        body = LowNodeLoadArgsSerializer(_args_body(row)).data
        return Response(body, headers={"ETag": concurrency.etag(row.version)})

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses=OpenApiResponse(
            description="The nodes above high before and after, and the coherence findings "
            "the edit resolves or creates; nothing is saved."
        ),
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="lownodeload-args/preview",
        url_name="lownodeload-args-preview",
        permission_classes=[IsViewer],
    )
    def preview(self, request: Request, pk: str | None = None) -> Response:
        """The impact of a LowNodeLoad args merge patch on the newest snapshot."""
        row = self.get_object()
        if not isinstance(request.data, dict):
            raise PolicyValidationError(
                {"errors": [{"field": "", "type": TYPE_INVALID,
                             "detail": "expected a JSON object of LowNodeLoadArgs fields"}]}
            )  # fmt: skip
        try:
            return Response(descheduling.preview_edit(row.cluster, row, request.data))
        except descheduler.EditInvalid as exc:
            raise PolicyValidationError({"errors": [e.to_dict() for e in exc.errors]}) from None
        except descheduling.NoSnapshot as exc:
            raise NotFound(str(exc)) from None

    @extend_schema(
        request=DeschedulerImportSerializer,
        responses=DeschedulerConfigurationSerializer,
        description="Store a DeschedulerConfiguration (YAML or JSON text, kept as written) as "
        "the cluster's; the next push writes it. Replacing one needs If-Match.",
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        url_name="import",
        permission_classes=[CanEditPolicy],
    )
    def import_document(self, request: Request) -> Response:
        serializer = DeschedulerImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        cluster = serializer.validated_data["cluster"]
        current = DeschedulerConfiguration.objects.filter(cluster=cluster).first()
        expected = (
            None if current is None else concurrency.expected_version(request, current.version)
        )
        try:
            row = descheduler.import_document(
                cluster,
                serializer.validated_data["document"],
                expected,
                ChangeContext.from_request(request),
            )
        except descheduler.StaleVersion as exc:
            raise concurrency.stale(exc.current) from None
        except descheduler.EditInvalid as exc:
            raise PolicyValidationError({"errors": [e.to_dict() for e in exc.errors]}) from None
        body = DeschedulerConfigurationSerializer(row, context={"request": request}).data
        status_code = 201 if current is None else 200
        return Response(body, status=status_code, headers={"ETag": concurrency.etag(row.version)})

    @action(detail=True, methods=["get"], url_path="history", url_name="history")
    def history(self, request: Request, pk: str | None = None) -> Response:
        """Every recorded change of this document, newest first, with the text before and after."""
        row = self.get_object()
        changes = PolicyChange.objects.filter(
            content_type=ContentType.objects.get_for_model(DeschedulerConfiguration),
            object_id=row.pk,
        ).order_by("-time", "-id")
        return Response(
            [
                {
                    "id": c.pk,
                    "time": c.time,
                    "action": c.action,
                    "source": c.source,
                    "user": c.user_name,
                    "version": c.object_version,
                    "message": c.message,
                    "before": c.prechange_data,
                    "after": c.postchange_data,
                }
                for c in changes
            ]
        )


class DeschedulerConfigurationViewSet(
    DeschedulerEditMixin, viewsets.ReadOnlyModelViewSet[DeschedulerConfiguration]
):
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
