"""What-if endpoints: start a comparison (editors), follow it, read its report, cancel it.

- ``POST /api/v1/what-if/``: check the inputs now (400 naming the field: ``workload``,
  ``baseline.yaml``, ``candidate.yaml``...) and queue the run (202);
- ``GET /api/v1/what-if/`` (filters: cluster, status): status and progress of each, without
  the heavy fields; ``GET …/{id}/``: everything, and once succeeded the report (``result``);
- ``POST /api/v1/what-if/{id}/cancel/``: stop a queued or running comparison.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from policy.accounts.rate_limits import WhatIfThrottle
from policy.accounts.roles import CanEditPolicy
from policy.api.strict import ModelSerializer, StrictCharField
from policy.clusters.models import Cluster
from policy.core.choices import ConfigurationSource, WorkloadSource
from policy.decisions import whatif
from policy.decisions.filters import WhatIfFilterSet
from policy.decisions.models import WhatIfRun

SUBFIELDS = {"baseline": "baseline.yaml", "candidate": "candidate.yaml"}


class ConfigurationInputSerializer(serializers.Serializer[Any]):
    """One side: ``source`` (stored, defaults, custom), ``yaml`` for custom, a ``name``."""

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # Declared here: "source" is also an attribute of every serializer field.
        return {
            "source": serializers.ChoiceField(choices=ConfigurationSource.choices),
            "yaml": StrictCharField(
                required=False,
                allow_blank=True,
                trim_whitespace=False,
                help_text="A KubeSchedulerConfiguration, for source=custom.",
            ),
            "name": StrictCharField(
                required=False, allow_blank=True, max_length=120, help_text="Shown in the report."
            ),
            "thresholds": serializers.BooleanField(
                default=False,
                help_text="Annotate the nodes as a push of the stored node threshold policies "
                "would, instead of as the snapshot has them.",
            ),
        }


class WhatIfCreateSerializer(serializers.Serializer[Any]):
    cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    workload_source = serializers.ChoiceField(
        choices=WorkloadSource.choices, default=WorkloadSource.MANIFESTS
    )
    workload = StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=whatif.MAX_WORKLOAD_BYTES,
        help_text="Pods, Deployments, ReplicaSets, StatefulSets or Jobs (YAML or JSON).",
    )
    baseline = ConfigurationInputSerializer()
    candidate = ConfigurationInputSerializer()


class WhatIfRunSerializer(ModelSerializer[WhatIfRun]):
    requested_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,  # null: the system asked
    )
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = WhatIfRun
        fields = [
            "id",
            "cluster",
            "snapshot",
            "snapshot_taken_at",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "workload_source",
            "workload",
            "pod_count",
            "baseline_source",
            "baseline_label",
            "baseline",
            "baseline_thresholds",
            "candidate_source",
            "candidate_label",
            "candidate",
            "candidate_thresholds",
            "error",
            "result",
            "requested_by",
            "created",
            "started",
            "finished",
        ]
        read_only_fields = fields


HEAVY = ("workload", "baseline", "candidate", "result")


class WhatIfSummarySerializer(WhatIfRunSerializer):
    """A list entry: everything but the manifests, the two documents and the report."""

    class Meta(WhatIfRunSerializer.Meta):
        fields = [f for f in WhatIfRunSerializer.Meta.fields if f not in HEAVY]
        read_only_fields = fields


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
