"""Views of the policies API: scheduler and descheduler configurations, and the node policies."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django.contrib.contenttypes.models import ContentType
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, mixins, renderers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from policy.accounts.changes import ChangeContext
from policy.accounts.models import PolicyChange
from policy.accounts.rate_limits import EvaluateThrottle
from policy.accounts.roles import CanEditPolicy, IsViewer
from policy.api import concurrency
from policy.api.errors import PolicyValidationError
from policy.api.policies.serializers import (
    CollectPolicySerializer,
    DeschedulerConfigurationSerializer,
    DeschedulerImportSerializer,
    DeschedulerRenderSerializer,
    ImportSerializer,
    LoadAwareArgsSerializer,
    LowNodeLoadArgsSerializer,
    NodeThresholdPolicySerializer,
    PolicyPreviewSerializer,
    SchedulerConfigurationSerializer,
    SchedulerProfileSerializer,
)
from policy.api.viewsets import (
    AT_PARAMETER,
    CreateMixin,
    DestroyMixin,
    HistoryMixin,
    ServiceMixin,
    T,
    UpdateMixin,
    parse_at,
)
from policy.decisions import descheduling
from policy.decisions import impact as decision_impact
from policy.policies import descheduler, rendering
from policy.policies import services as policies
from policy.policies.filters import (
    CollectPolicyFilterSet,
    DeschedulerConfigurationFilterSet,
    LoadAwareArgsFilterSet,
    NodeThresholdPolicyFilterSet,
    SchedulerConfigurationFilterSet,
    SchedulerProfileFilterSet,
)
from policy.policies.located import located_body
from policy.policies.models import (
    DeschedulerConfiguration,
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from scoring import TYPE_INVALID


class YAMLRenderer(renderers.BaseRenderer):
    """Text that already is YAML, as ``application/yaml``."""

    media_type = "application/yaml"
    format = "yaml"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return str(data).encode(self.charset) if data is not None else b""


LIST_DOC = "{}: filter with the query parameters, order with ?ordering=, page with ?limit=&offset=."


class PolicyViewSet(
    mixins.ListModelMixin,
    CreateMixin[T],
    UpdateMixin[T],
    DestroyMixin[T],
    HistoryMixin[T],
):
    """CRUD of a policy model, with ETags, history and revert; editors write."""

    permission_classes = [CanEditPolicy]


# -- scheduler configurations -------------------------------------------------------------------

FORMAT_PARAMETER = OpenApiParameter(
    "format",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    enum=["yaml", "json"],
    description="yaml (the default) or json: the same text as a JSON string "
    "(Accept: application/json does the same); any other value is a 400. Errors are JSON.",
)


@extend_schema_view(
    list=extend_schema(description=LIST_DOC.format("Scheduler configurations (one per cluster)")),
    render=extend_schema(
        responses={
            (200, "application/yaml"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.STR,
        },
        parameters=[FORMAT_PARAMETER],
        description="The KubeSchedulerConfiguration YAML exactly as written to the cluster's "
        "ConfigMap: the document as imported or adopted (its apiVersion, every field, sparse) "
        "with the edits made here; no default is filled in (see effective/).",
    ),
    effective=extend_schema(
        responses={
            (200, "application/yaml"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.STR,
        },
        parameters=[FORMAT_PARAMETER],
        description="What the scheduler runs with the rendered document: the engine's "
        "defaulted v1 document. For reading only; never written to the cluster.",
    ),
    check=extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The engine's check of the rendered document for the cluster's scheduler "
        "target: valid, errors, warnings (plugin names the target's registry does not know "
        "for sure: custom builds, unknown releases), target, apiVersion and registry.",
    ),
    document=extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The v1 KubeSchedulerConfiguration as stored (not defaulted), LoadAware "
        "args included.",
    ),
    import_document=extend_schema(
        request=ImportSerializer,
        responses={200: SchedulerConfigurationSerializer, 201: SchedulerConfigurationSerializer},
        description="Create (201) or replace (200) a cluster's configuration from a "
        "KubeSchedulerConfiguration (v1beta2, v1beta3, v1, or v1beta1 for Kubernetes 1.19-1.22), "
        "kept as written: render/ gives "
        "it back with the edits made here. Replacing needs "
        "If-Match with the configuration's ETag (or *).",
    ),
)
class SchedulerConfigurationViewSet(PolicyViewSet[SchedulerConfiguration]):
    """A cluster's KubeSchedulerConfiguration: global fields here, profiles at /profiles/."""

    queryset = SchedulerConfiguration.objects.select_related("cluster").prefetch_related("profiles")
    serializer_class = SchedulerConfigurationSerializer
    filterset_class = SchedulerConfigurationFilterSet
    ordering_fields = ["id", "cluster__name", "version", "updated"]
    ordering = ["id"]
    service = policies.SchedulerConfigurationService()
    optional_if_match: ClassVar[tuple[str, ...]] = ("import_document",)
    etag_actions = ("revert", "import_document")
    validated_reads = ("render", "effective")  # ?format=, and a document that cannot render

    @action(detail=True, methods=["get"], renderer_classes=[YAMLRenderer, renderers.JSONRenderer])
    def render(self, request: Request, pk: str | None = None) -> Response:
        """The document as written, with only the edits made here."""
        return self._document(rendering.render_scheduler_configuration)

    @action(detail=True, methods=["get"], renderer_classes=[YAMLRenderer, renderers.JSONRenderer])
    def effective(self, request: Request, pk: str | None = None) -> Response:
        """The same document defaulted, as the scheduler reads it."""
        return self._document(rendering.effective_configuration)

    def _document(self, build: Callable[[SchedulerConfiguration], str]) -> Response:
        configuration = self.get_object()
        try:
            text = build(configuration)
        except policies.PolicyInvalid as exc:
            raise PolicyValidationError(
                located_body(exc.errors, kind=self.service.kind, object_id=configuration.pk)
            ) from None
        return Response(text, headers={"ETag": configuration.etag}, content_type=None)

    @action(detail=True, methods=["get"])
    def check(self, request: Request, pk: str | None = None) -> Response:
        configuration = self.get_object()
        body = rendering.check_scheduler_configuration(configuration)
        return Response(body, headers={"ETag": configuration.etag})

    @action(detail=True, methods=["get"])
    def document(self, request: Request, pk: str | None = None) -> Response:
        configuration = self.get_object()
        return Response(configuration.to_document(), headers={"ETag": configuration.etag})

    @action(detail=False, methods=["post"], url_path="import", url_name="import")
    def import_document(self, request: Request) -> Response:
        serializer = ImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        cluster = serializer.validated_data["cluster"]
        existing = SchedulerConfiguration.objects.filter(cluster=cluster).first()
        if existing is not None:
            expected = concurrency.expected_version(request, existing.version)
        else:  # a first import: unless If-Match says "*", none may appear meanwhile
            overwrite = request.headers.get("If-Match", "").strip() == "*"
            expected = None if overwrite else policies.NOT_THERE_YET
        source = serializer.validated_data["document"]
        confirmed = set(serializer.validated_data["delete_profiles"])
        try:
            configuration, created = self._call(
                existing.pk if existing else None,
                {},
                lambda: self.service.import_document(
                    cluster,
                    source,
                    self._context(),
                    expected_version=expected,
                    confirmed_deletes=confirmed,
                ),
            )
        except policies.DeletesUnconfirmed as exc:
            raise exceptions.ValidationError({"delete_profiles": [str(exc)]}) from None
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return self._respond(configuration, code)

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        """A ``?format=`` the document actions do not offer is a 400 naming it (DRF: 404)."""
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:
            if force or getattr(self, "action", None) not in ("render", "effective"):
                raise
            raise exceptions.ValidationError({"format": ["Must be yaml or json."]}) from None

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        if getattr(self, "action", None) in ("render", "effective"):  # errors as JSON, not YAML
            self.request.accepted_renderer = renderers.JSONRenderer()
            self.request.accepted_media_type = "application/json"
        return response

    def _call(self, object_id: int | None, data: Any, call: Callable[[], Any]) -> Any:
        try:
            return super()._call(object_id, data, call)
        except PolicyValidationError as exc:
            if getattr(self, "action", None) == "import_document":
                exc.body = _document_errors(exc.body)
            raise


def _document_errors(body: dict[str, Any]) -> dict[str, Any]:
    """Import errors name paths in the uploaded document, under the ``document`` key."""
    messages = [
        f"{e['field']}: {e['detail']}" if e["field"] else e["detail"] for e in body["errors"]
    ]
    return {"errors": body["errors"], "document": messages}


def _impact_response(
    view: ServiceMixin[Any], object_id: Any, data: Any, call: Callable[[], Any]
) -> Response:
    """An impact answer; the edit's errors as a save's, no snapshot a 409."""
    try:
        return Response(view._call(object_id, data, call))
    except decision_impact.NoSnapshot as exc:
        return Response({"cluster": [str(exc)]}, status=status.HTTP_409_CONFLICT)
    except decision_impact.UnknownProfile as exc:
        raise PolicyValidationError({"profile": [str(exc)]}) from None


class ImpactMixin(ServiceMixin[T]):
    """``POST .../{id}/impact/``: what saving the fields a PATCH would send would change on
    the cluster's newest snapshot (docs/advisor.md); nothing is saved."""

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            200: OpenApiResponse(
                response=OpenApiTypes.OBJECT,
                description="`filtered` (before, after, added, removed nodes; `before` is the "
                'dashboard\'s "filtered now"), `pending` (placeable before and after, newly '
                "placeable and unplaceable pods) and `thresholds_changed` (nodes), on the "
                "cluster's newest snapshot. Nothing is saved.",
            ),
            400: OpenApiResponse(description="The fields as a PATCH would refuse them."),
            409: OpenApiResponse(description="The cluster has no snapshot yet."),
        },
    )
    @action(detail=True, methods=["post"], throttle_classes=[EvaluateThrottle])
    def impact(self, request: Request, pk: str | None = None) -> Response:
        """The impact of an edit before saving it."""
        instance = self.get_object()
        serializer = self.get_serializer(instance, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        return _impact_response(
            self,
            instance.pk,
            data,
            lambda: decision_impact.update_impact(self.service, instance, data, self._context()),
        )


class SchedulerProfileViewSet(ImpactMixin[SchedulerProfile], PolicyViewSet[SchedulerProfile]):
    """Profiles of a scheduler configuration (KubeSchedulerProfile)."""

    queryset = SchedulerProfile.objects.select_related("configuration", "loadaware_args")
    serializer_class = SchedulerProfileSerializer
    filterset_class = SchedulerProfileFilterSet
    ordering_fields = ["id", "position", "scheduler_name", "updated"]
    ordering = ["configuration", "position", "id"]
    service = policies.ProfileService()


class LoadAwareArgsViewSet(
    ImpactMixin[LoadAwareSchedulingArgs], PolicyViewSet[LoadAwareSchedulingArgs]
):
    """LoadAwareSchedulingArgs of a profile (rendered into its pluginConfig)."""

    queryset = LoadAwareSchedulingArgs.objects.select_related("profile__configuration")
    serializer_class = LoadAwareArgsSerializer
    filterset_class = LoadAwareArgsFilterSet
    ordering_fields = ["id", "updated"]
    ordering = ["id"]
    service = policies.LoadAwareArgsService()


# -- node threshold and collect policies --------------------------------------------------------


@extend_schema_view(
    preview=extend_schema(
        parameters=[AT_PARAMETER],
        responses=PolicyPreviewSerializer,
        description="The nodes of the cluster's newest snapshot this policy targets now.",
    )
)
class NodeThresholdPolicyViewSet(PolicyViewSet[NodeThresholdPolicy]):
    """Per-node usage thresholds (the scheduling.koordinator.sh/usage-thresholds annotation)."""

    queryset = NodeThresholdPolicy.objects.select_related("cluster")
    serializer_class = NodeThresholdPolicySerializer
    filterset_class = NodeThresholdPolicyFilterSet
    ordering_fields = ["id", "name", "priority", "updated"]
    ordering = ["cluster", "-priority", "id"]
    service = policies.NodeThresholdPolicyService()
    validated_reads = ("preview",)

    def get_serializer_context(self) -> dict[str, Any]:
        """Writes answer with warnings (resources no node reports); reads do not look."""
        context = dict(super().get_serializer_context())
        context["warn"] = self.action in ("create", "update", "partial_update")
        return context

    @action(detail=True, methods=["get"])
    def preview(self, request: Request, pk: str | None = None) -> Response:
        policy = self.get_object()
        at = parse_at(request)
        try:
            stored, local, names = rendering.preview_policy(policy, at)
        except rendering.NoSnapshot as exc:
            raise exceptions.NotFound(str(exc)) from None
        body = {
            "policy": policy.pk,
            "snapshot": {"id": stored.pk, "taken_at": stored.taken_at},
            "at": local.isoformat(),
            "active": policy.is_active_at(local.time().replace(tzinfo=None)),
            "count": len(names),
            "nodes": names,
        }
        return Response(PolicyPreviewSerializer(body).data)

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            200: OpenApiResponse(
                response=OpenApiTypes.OBJECT,
                description="As the other impact actions (`filtered`, `pending`, "
                "`thresholds_changed`), for saving the policy and a push writing what the "
                "policies then ask for; `annotations_changed` names the nodes whose annotation "
                "that push would write or clear. Nothing is saved.",
            ),
            400: OpenApiResponse(description="The policy as a POST (or PATCH) would refuse it."),
            404: OpenApiResponse(description="No policy `id`."),
            409: OpenApiResponse(description="The cluster has no snapshot yet."),
        },
    )
    @action(detail=False, methods=["post"], throttle_classes=[EvaluateThrottle])
    def impact(self, request: Request) -> Response:
        """The impact of a new policy (the body as a POST sends it) or of an edit (``id`` and
        the fields a PATCH sends) before saving it; ``profile`` names the LoadAware profile
        (default: the dashboard's)."""
        body = dict(request.data) if isinstance(request.data, Mapping) else {}
        pk, profile = body.pop("id", None), body.pop("profile", None)
        if profile is not None and not isinstance(profile, str):
            raise PolicyValidationError({"profile": ["Expected a profile's schedulerName."]})
        context = self._context()
        if pk is None:
            serializer = self.get_serializer(data=body)
            serializer.is_valid(raise_exception=True)
            data = serializer.validated_data
            cluster = data["cluster"]

            def edit() -> Any:
                return self.service.create(data, context)
        else:
            instance = self._policy(pk)
            serializer = self.get_serializer(instance, data=body, partial=True)
            serializer.is_valid(raise_exception=True)
            data = serializer.validated_data
            cluster = instance.cluster

            def edit() -> Any:
                return self.service.update(instance.pk, data, context, expected_version=None)

        return _impact_response(
            self, pk, data, lambda: decision_impact.threshold_policy_impact(cluster, edit, profile)
        )

    def _policy(self, pk: Any) -> NodeThresholdPolicy:
        if isinstance(pk, bool) or not isinstance(pk, int | str) or not str(pk).isdigit():
            raise PolicyValidationError({"id": ["Expected a node threshold policy's id."]})
        instance = self.filter_queryset(self.get_queryset()).filter(pk=int(pk)).first()
        if instance is None:
            raise NotFound(f"No node threshold policy {pk}.")
        return instance


class CollectPolicyViewSet(PolicyViewSet[NodeMetricCollectPolicy]):
    """NodeMetric collect policies (Koordinator's slo-controller colocation-config)."""

    queryset = NodeMetricCollectPolicy.objects.select_related("cluster")
    serializer_class = CollectPolicySerializer
    filterset_class = CollectPolicyFilterSet
    ordering_fields = ["id", "name", "priority", "updated"]
    ordering = ["cluster", "-is_default", "-priority", "id"]
    service = policies.CollectPolicyService()


# -- descheduler configurations -----------------------------------------------------------------


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
