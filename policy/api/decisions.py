"""Evaluate a pod (``POST /api/v1/clusters/{id}/evaluate/``) and browse decision history."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts.models import ApiToken
from policy.accounts.rate_limits import EvaluateThrottle
from policy.accounts.roles import IsViewer
from policy.api.strict import ModelSerializer, StrictCharField
from policy.clusters.models import Cluster
from policy.core.choices import DecisionSource
from policy.core.params import parse_count
from policy.decisions import evaluation, fixes, services
from policy.decisions.filters import DecisionFilterSet
from policy.decisions.models import PlacementDecision
from scoring import DEFAULT_RANKED, NodeSelection

MAX_NODES_LIMIT = 1000  # nodes one decision response shows at most


class PodField(serializers.JSONField):
    """A Pod manifest as a JSON object, or as YAML/JSON text (as ``kubectl`` prints it)."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(evaluation.pod_manifest(data))
        except evaluation.EvaluationError as exc:
            raise serializers.ValidationError(str(exc)) from None


class EvaluateRequestSerializer(serializers.Serializer[Any]):
    pod = PodField(help_text="The v1 Pod to place (object, or YAML/JSON text).")
    configuration = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Scheduler configuration id; default: the cluster's newest, else defaults.",
    )


class DecisionSummarySerializer(ModelSerializer[PlacementDecision]):
    class Meta:
        model = PlacementDecision
        fields = [
            "id",
            "cluster",
            "snapshot",
            "snapshot_taken_at",
            "pod_namespace",
            "pod_name",
            "profile",
            "configuration_id",
            "configuration_version",
            "selected_node",
            "outcome",
            "message",
            "feasible_nodes",
            "total_nodes",
            "source",
            "actual_node",
            "scheduler_message",
            "agreement",
            "actual_rank",
            "score_gap",
            "created",
        ]


class FailureSerializer(serializers.Serializer[Any]):
    plugin = StrictCharField()
    code = StrictCharField()
    reason = StrictCharField(allow_null=True)


class FilteredGroupSerializer(serializers.Serializer[Any]):
    """Filtered nodes that failed the same filters with the same reasons."""

    failures = FailureSerializer(many=True, help_text="Each failing filter and its reason.")
    count = serializers.IntegerField(help_text="Nodes in the group.")
    example = StrictCharField(help_text="The group's first node by name.")


class NodesPageSerializer(serializers.Serializer[Any]):
    """Which of the decision's nodes ``explanation.nodes`` holds, and what it leaves out."""

    total = serializers.IntegerField(help_text="Nodes the decision evaluated.")
    ranked = serializers.IntegerField(help_text="Feasible nodes (listed first, best first).")
    filtered = serializers.IntegerField(help_text="Nodes some filter rejected.")
    offset = serializers.IntegerField(allow_null=True, help_text="nodes_offset asked for.")
    limit = serializers.IntegerField(allow_null=True, help_text="nodes_limit asked for.")
    returned = serializers.IntegerField(help_text="Nodes in explanation.nodes.")
    omitted = serializers.IntegerField(help_text="Nodes left out of explanation.nodes.")
    filtered_groups = FilteredGroupSerializer(many=True)


class DecisionSerializer(DecisionSummarySerializer):
    """A stored decision with the engine's explanation (the engine contract's JSON), its node
    list paged: ``context["nodes"]`` is ``(offset, limit)``, both None for the default page."""

    requested_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,  # null: the system asked
    )
    explanation = serializers.SerializerMethodField(
        help_text="The engine contract's JSON; `nodes` holds the nodes of `nodes_page`."
    )
    nodes_page = serializers.SerializerMethodField()

    class Meta(DecisionSummarySerializer.Meta):
        fields = [
            *DecisionSummarySerializer.Meta.fields,
            "requested_by",
            "pod",
            "explanation",
            "nodes_page",
        ]

    def _selection(self, decision: PlacementDecision) -> NodeSelection:
        cache: dict[int, NodeSelection] = self.__dict__.setdefault("_selections", {})
        if decision.pk not in cache:
            offset, limit = self.context.get("nodes", (None, None))
            cache[decision.pk] = decision.stored_explanation().select(offset, limit)
        return cache[decision.pk]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_explanation(self, decision: PlacementDecision) -> dict[str, Any]:
        positions = self._selection(decision).positions
        return decision.stored_explanation().to_dict(positions)

    @extend_schema_field(NodesPageSerializer)
    def get_nodes_page(self, decision: PlacementDecision) -> dict[str, Any]:
        names = decision.stored_explanation().names()
        return nodes_page(self._selection(decision), names, self.context.get("nodes"))


def nodes_page(
    selection: NodeSelection, names: Sequence[str], asked: tuple[int | None, int | None] | None
) -> dict[str, Any]:
    """What a page of a decision's nodes holds and leaves out (``NodesPageSerializer``)."""
    offset, limit = asked or (None, None)
    return {
        "total": selection.total,
        "ranked": selection.ranked,
        "filtered": selection.total - selection.ranked,
        "offset": offset,
        "limit": limit,
        "returned": len(selection.positions),
        "omitted": selection.omitted,
        "filtered_groups": [group.to_dict(names) for group in selection.groups],
    }


def nodes_range(query: Any) -> tuple[int | None, int | None]:
    """``nodes_offset`` and ``nodes_limit`` from the query: both None for the default page;
    an offset alone shows ``MAX_NODES_LIMIT`` nodes."""
    offset = _whole(query, "nodes_offset", 0, None)
    limit = _whole(query, "nodes_limit", 1, MAX_NODES_LIMIT)
    if offset is not None and limit is None:
        limit = MAX_NODES_LIMIT
    return offset, limit


def _whole(query: Any, name: str, low: int, high: int | None) -> int | None:
    """Query parameter ``name`` as a whole number in ``low..high`` (None when absent); a 400
    naming the parameter otherwise."""
    raw = query.get(name)
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise serializers.ValidationError({name: ["must be a whole number"]}) from None
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise serializers.ValidationError({name: [f"must be {bound}"]})
    return value


class DecisionPagination(CursorPagination):
    """Cursor pagination: stable pages while new decisions keep arriving."""

    ordering = ("-created", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int:
        """``?limit=``, read strictly: not a whole number of at least 1 is a 400 naming it
        (DRF falls back to the default page size), and capped at :attr:`max_page_size`."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        value = parse_count(raw)
        if value is None or value < 1:
            raise serializers.ValidationError(
                {self.page_size_query_param: ["Must be a whole number of at least 1."]}
            )
        return min(value, self.max_page_size)

    def decode_cursor(self, request: Request) -> Any:
        """A cursor that does not decode is bad input (400 naming ``cursor``), not a 404."""
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise serializers.ValidationError(
                {self.cursor_query_param: [self.invalid_cursor_message]}
            ) from None


_NODES_PARAMETERS = [
    OpenApiParameter(
        "nodes_offset",
        int,
        description="First node of `explanation.nodes` to show, in the explanation's order "
        "(ranked nodes best first, then filtered nodes by name). Default: see nodes_limit.",
    ),
    OpenApiParameter(
        "nodes_limit",
        int,
        description=f"Nodes to show, 1-{MAX_NODES_LIMIT} (default {MAX_NODES_LIMIT} when "
        f"nodes_offset is given). Without either parameter: the best {DEFAULT_RANKED} ranked "
        "nodes plus the first node of every group of filtered nodes; `nodes_page` says how "
        "many nodes there are and what was left out.",
    ),
]


@extend_schema_view(
    retrieve=extend_schema(
        parameters=_NODES_PARAMETERS,
        responses={
            200: DecisionSerializer,
            400: OpenApiResponse(description="nodes_offset or nodes_limit out of range."),
        },
    )
)
class DecisionViewSet(viewsets.ReadOnlyModelViewSet[PlacementDecision]):
    """Placement decisions, newest first; the list omits the (large) explanation, one
    decision pages its node list (``nodes_offset``, ``nodes_limit``)."""

    queryset = PlacementDecision.objects.select_related("requested_by")
    permission_classes = [IsViewer]
    filterset_class = DecisionFilterSet
    pagination_class = DecisionPagination
    ordering_fields: list[str] = []

    def get_queryset(self) -> Any:
        queryset = super().get_queryset()
        if self.action == "list":
            queryset = queryset.defer("explanation_data", "pod")
        return queryset

    def get_serializer_class(self) -> Any:
        return DecisionSummarySerializer if self.action == "list" else DecisionSerializer

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        nodes = nodes_range(self.request.query_params)  # a 400 for a bad value, list or not
        if self.action == "retrieve":
            context["nodes"] = nodes
        return context

    @extend_schema(
        responses={
            200: OpenApiResponse(
                response=OpenApiTypes.OBJECT,
                description="`fixes`: each with kind, target, summary, patch, nodes, "
                "feasibleNodes and, for policy and node fixes, unblocks (docs/advisor.md); "
                "empty for a scheduled pod. `snapshot`, `configuration`, "
                "`configurationVersion`: what they were computed on (the cluster's newest "
                "snapshot and current configuration).",
            ),
            400: OpenApiResponse(
                description="The cluster has no snapshot, or the stored pod "
                "or the configuration does not evaluate."
            ),
            404: OpenApiResponse(description="No such decision."),
            429: OpenApiResponse(description="Over API_EVALUATE_RATE (see Retry-After)."),
        },
    )
    @action(detail=True, methods=["get"], throttle_classes=[EvaluateThrottle])
    def fixes(self, request: Request, pk: str | None = None) -> Response:
        """How to place the decision's pod: changes to the pod, the policy or a few nodes
        under which the engine, run again on the newest snapshot, places it."""
        decision = get_object_or_404(PlacementDecision.objects.select_related("cluster"), pk=pk)
        try:
            found = fixes.fixes_for(decision)
        except evaluation.EvaluationError as exc:
            return Response({exc.field: [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(found.to_dict())


def _ids(decision: PlacementDecision) -> dict[str, Any]:
    return {
        "id": decision.pk,
        "cluster": decision.cluster_id,
        "snapshot": decision.snapshot_id,
        "snapshotTakenAt": decision.snapshot_taken_at.isoformat(),
        "configuration": decision.configuration_id,
        "configurationVersion": decision.configuration_version,
        "outcome": decision.outcome,
        "created": decision.created.isoformat(),
    }


def made_response(
    decision: PlacementDecision,
    evaluated: evaluation.Evaluated,
    asked: tuple[int | None, int | None],
) -> dict[str, Any]:
    """A decision just made, its node list paged as ``GET /api/v1/decisions/{id}/`` pages it
    (``nodesPage`` says what was left out), from the page the engine cut (without decoding
    the explanation), plus the record's ids."""
    page = evaluated.page
    offset, limit = asked
    nodes_page = {
        "total": page["total"],
        "ranked": page["ranked"],
        "filtered": page["total"] - page["ranked"],
        "offset": offset,
        "limit": limit,
        "returned": page["returned"],
        "omitted": page["omitted"],
        "filtered_groups": page["filtered_groups"],
    }
    return {**page["explanation"], "nodesPage": nodes_page, **_ids(decision)}


class EvaluateView(APIView):
    """Place a pod on the cluster's newest snapshot with the engine, explain it, record it."""

    permission_classes = [IsViewer]
    throttle_classes = [EvaluateThrottle]

    @extend_schema(
        request=EvaluateRequestSerializer,
        parameters=_NODES_PARAMETERS,
        responses={
            201: OpenApiResponse(
                description="The decision: engine contract JSON, its `nodes` paged as "
                "`GET /api/v1/decisions/{id}/` pages them (`nodesPage` says what was left "
                "out), plus ids."
            ),
            429: OpenApiResponse(description="Over API_EVALUATE_RATE (see Retry-After)."),
            400: OpenApiResponse(
                description="Bad pod, configuration, cluster state, nodes_offset or nodes_limit."
            ),
            404: OpenApiResponse(description="No such cluster."),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        asked = nodes_range(request.query_params)
        payload = EvaluateRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        token = request.auth if isinstance(request.auth, ApiToken) else None
        try:
            decision, made = services.evaluate_and_record(
                cluster,
                payload.validated_data["pod"],
                configuration_id=payload.validated_data.get("configuration"),
                user=request.user,
                source=DecisionSource.API,
                token_name=token.name if token else "",
                page=asked,
            )
        except evaluation.EvaluationError as exc:
            body: dict[str, Any] = {exc.field: [str(exc)]}
            if exc.errors:
                body["errors"] = exc.errors
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        return Response(made_response(decision, made, asked), status=status.HTTP_201_CREATED)
