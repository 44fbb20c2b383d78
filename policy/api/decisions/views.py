"""Views of the decisions API: evaluate a pod, browse decisions, compare configurations.

- ``POST /api/v1/clusters/{id}/evaluate/``: place a pod on the newest snapshot, explain it,
  record it; ``GET /api/v1/decisions/`` and ``…/{id}/`` browse the decision history;
- ``POST /api/v1/what-if/``: check the inputs now (400 naming the field: ``workload``,
  ``baseline.yaml``, ``candidate.yaml``...) and queue the run (202);
  ``GET /api/v1/what-if/`` (filters: cluster, status): status and progress of each, without
  the heavy fields; ``GET …/{id}/``: everything, and once succeeded the report (``result``);
  ``POST /api/v1/what-if/{id}/cancel/``: stop a queued or running comparison;
- ``GET /api/v1/clusters/{id}/lownodeload/``: LowNodeLoad's dry run on the newest snapshot;
  ``…/coherence/``: the coherence findings of the load-aware stack.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts.models import ApiToken
from policy.accounts.rate_limits import EvaluateThrottle, WhatIfThrottle
from policy.accounts.roles import CanEditPolicy, IsViewer
from policy.api.decisions.serializers import (
    HEAVY,
    DecisionSerializer,
    DecisionSummarySerializer,
    EvaluateRequestSerializer,
    WhatIfCreateSerializer,
    WhatIfRunSerializer,
    WhatIfSummarySerializer,
)
from policy.clusters.models import Cluster
from policy.core.choices import DecisionSource
from policy.core.params import parse_count
from policy.decisions import descheduling, evaluation, fixes, services, whatif
from policy.decisions.filters import DecisionFilterSet, WhatIfFilterSet
from policy.decisions.models import PlacementDecision, WhatIfRun
from scoring import DEFAULT_RANKED, InputError

MAX_NODES_LIMIT = 1000  # nodes one decision response shows at most


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


# -- what-if comparisons ------------------------------------------------------------------------

SUBFIELDS = {"baseline": "baseline.yaml", "candidate": "candidate.yaml"}


class WhatIfViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[WhatIfRun]
):
    """What-if comparisons: one workload under two scheduler configurations."""

    queryset = WhatIfRun.objects.select_related("requested_by")
    serializer_class = WhatIfRunSerializer
    filterset_class = WhatIfFilterSet
    ordering = ["-created", "-id"]
    permission_classes = [CanEditPolicy]

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Any]]:
        return WhatIfSummarySerializer if self.action == "list" else WhatIfRunSerializer

    def get_throttles(self) -> list[Any]:
        """Starting a comparison is limited (API_WHATIF_RATE); reading is not."""
        return [WhatIfThrottle()] if self.action == "create" else []

    def get_queryset(self) -> Any:
        queryset = super().get_queryset()
        return queryset.defer(*HEAVY) if self.action == "list" else queryset

    @extend_schema(request=WhatIfCreateSerializer, responses={202: WhatIfRunSerializer})
    def create(self, request: Request) -> Response:
        given = WhatIfCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            run = whatif.start(
                data["cluster"],
                workload_source=data["workload_source"],
                workload=data.get("workload", ""),
                baseline=_side(data["baseline"]),
                candidate=_side(data["candidate"]),
                user=request.user,
                replay_from=data.get("replay_from"),
                replay_until=data.get("replay_until"),
            )
        except whatif.WhatIfInvalid as exc:
            raise serializers.ValidationError(
                {SUBFIELDS.get(field, field): problems for field, problems in exc.errors.items()}
            ) from None
        run.refresh_from_db()  # an eager worker may have finished it already
        return Response(WhatIfRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={200: WhatIfRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        run = self.get_object()
        if not whatif.cancel(run):
            raise serializers.ValidationError({"status": [f"the comparison is {run.status}"]})
        run.refresh_from_db()
        return Response(WhatIfRunSerializer(run).data)


def _side(data: dict[str, Any]) -> whatif.ConfigurationInput:
    return whatif.ConfigurationInput(
        data["source"], data.get("yaml", ""), data.get("name", ""), data.get("thresholds", False)
    )


# -- descheduling reports -----------------------------------------------------------------------


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
