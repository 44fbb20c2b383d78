"""Sync endpoints: push (operators), dry-run plan (operators), refresh (editors and operators),
drift (viewers) and the sync job history (viewers).

- ``POST /api/v1/clusters/{id}/sync/``: queue a push (202, the job); ``?dry_run=1`` answers
  the plan instead, like ``POST …/sync/plan/`` (200, a finished dry-run job whose ``changes``
  list every field that would change, object by object, with diffs);
- ``POST /api/v1/clusters/{id}/refresh/``: queue a read-back into a new snapshot (202);
- ``GET /api/v1/clusters/{id}/drift/``: what the last refresh found changed since schedboard
  last wrote it, with diffs, and the snapshot's age;
- ``GET /api/v1/sync-jobs/`` (filters: cluster, kind, status, trigger, created after/before)
  and ``GET /api/v1/sync-jobs/{id}/``.
"""

from __future__ import annotations

from typing import Any

import django_filters
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.choices import Role
from policy.filtersets import IdFilter, UtcDateTimeFilter
from policy.models import Cluster, SyncJob, SyncJobKind, SyncJobStatus, SyncJobTrigger
from policy.roles import CanPushPolicy, IsViewer, _RolePermission
from policy.services import sync as sync_services


class CanRefresh(_RolePermission):
    """Editors and operators: a refresh reads the cluster (API load), it writes nothing."""

    read_role = write_role = Role.EDITOR


class ChangeSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()
    field = serializers.CharField()
    action = serializers.ChoiceField(choices=["add", "update", "remove"])
    before = serializers.CharField(allow_null=True)
    after = serializers.CharField(allow_null=True)
    diff = serializers.CharField(allow_blank=True)


class SyncJobSerializer(serializers.ModelSerializer[SyncJob]):
    requested_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    duration = serializers.FloatField(read_only=True, allow_null=True)
    changes = ChangeSerializer(many=True, read_only=True)
    notes = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = SyncJob
        fields = [
            "id",
            "cluster",
            "kind",
            "status",
            "trigger",
            "requested_by",
            "created",
            "started",
            "finished",
            "duration",
            "attempts",
            "error",
            "changes",
            "notes",
            "snapshot",
            "log",
        ]
        read_only_fields = fields


class DriftSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()
    field = serializers.CharField()
    expected = serializers.CharField(allow_null=True, help_text="What schedboard last wrote.")
    actual = serializers.CharField(allow_null=True, help_text="What the cluster has.")
    diff = serializers.CharField()


class SnapshotAgeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    taken_at = serializers.DateTimeField()
    age_seconds = serializers.FloatField()


class DriftReportSerializer(serializers.Serializer[Any]):
    cluster = serializers.IntegerField()
    drifted = serializers.BooleanField()
    checked_at = serializers.DateTimeField(allow_null=True)
    last_push = serializers.IntegerField(allow_null=True)
    last_pushed_at = serializers.DateTimeField(allow_null=True)
    snapshot = SnapshotAgeSerializer(allow_null=True)
    drift = DriftSerializer(many=True)


class SyncJobFilterSet(django_filters.FilterSet):
    cluster = IdFilter()
    kind = django_filters.ChoiceFilter(choices=SyncJobKind.choices)
    status = django_filters.ChoiceFilter(choices=SyncJobStatus.choices)
    trigger = django_filters.ChoiceFilter(choices=SyncJobTrigger.choices)
    created_after = UtcDateTimeFilter(field_name="created", lookup_expr="gte")
    created_before = UtcDateTimeFilter(field_name="created", lookup_expr="lt")

    class Meta:
        model = SyncJob
        fields = ["cluster", "kind", "status", "trigger"]


class SyncJobViewSet(viewsets.ReadOnlyModelViewSet[SyncJob]):
    """Every push, refresh and dry-run: status, timings, error, what changed and the log."""

    queryset = SyncJob.objects.select_related("requested_by")
    serializer_class = SyncJobSerializer
    filterset_class = SyncJobFilterSet
    ordering_fields = ["created", "finished", "id"]
    ordering = ["-created", "-id"]
    permission_classes = [IsViewer]


DRY_RUN = OpenApiParameter(
    "dry_run", bool, description="1: answer the plan (200) instead of queueing a push."
)


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in {"1", "true", "yes", "on"}


class PushRequestSerializer(serializers.Serializer[Any]):
    plan = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="A succeeded dry-run of this cluster: the push writes only changes among its "
        "own, else it fails writing nothing (the plan changed since it was reviewed).",
    )


class ClusterSyncView(APIView):
    """Push the cluster's policies (operators): 202 with the queued job (a push already waiting
    is reused). With ``{"plan": <dry-run id>}`` the push is limited to that plan's changes.
    With ``?dry_run=1``, 200 with the planned changes; nothing is written."""

    permission_classes = [CanPushPolicy]

    @extend_schema(
        request=PushRequestSerializer,
        parameters=[DRY_RUN],
        responses={202: SyncJobSerializer, 200: SyncJobSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        if _truthy(request.query_params.get("dry_run")):
            return _plan_response(cluster, request)
        given = PushRequestSerializer(data=request.data or {})
        given.is_valid(raise_exception=True)
        confirmed = None
        if "plan" in given.validated_data:
            confirmed = _reviewed_plan(cluster, given.validated_data["plan"]).changes
        job = sync_services.push(cluster, user=request.user, confirmed=confirmed)
        return Response(SyncJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _reviewed_plan(cluster: Cluster, plan_id: int) -> SyncJob:
    plan = SyncJob.objects.filter(
        pk=plan_id, cluster=cluster, kind=SyncJobKind.DRY_RUN, status=SyncJobStatus.SUCCEEDED
    ).first()
    if plan is None:
        raise serializers.ValidationError(
            {"plan": [f"no succeeded dry-run {plan_id} of cluster {cluster.name}"]}
        )
    return plan


def _plan_response(cluster: Cluster, request: Request) -> Response:
    job = sync_services.plan(cluster, user=request.user)
    code = status.HTTP_200_OK if job.status == SyncJobStatus.SUCCEEDED else 502
    return Response(SyncJobSerializer(job).data, status=code)


class ClusterSyncPlanView(APIView):
    """The dry-run (operators): every change a push would write now, object by object, with
    diffs; recorded as a dry-run job. 502 with the job's error when the cluster cannot be
    read."""

    permission_classes = [CanPushPolicy]

    @extend_schema(request=None, responses={200: SyncJobSerializer, 502: SyncJobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        return _plan_response(get_object_or_404(Cluster, pk=pk), request)


class ClusterRefreshView(APIView):
    """Read the cluster back into a new snapshot (editors and operators); 202 with the job."""

    permission_classes = [CanRefresh]

    @extend_schema(request=None, responses={202: SyncJobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        job = sync_services.refresh(cluster, user=request.user)
        return Response(SyncJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ClusterDriftView(APIView):
    """What the last refresh found different from what schedboard last wrote (the scheduler
    ConfigMap key, managed node annotations), with unified diffs; and the snapshot's age."""

    permission_classes = [IsViewer]

    @extend_schema(responses=DriftReportSerializer)
    def get(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        return Response(DriftReportSerializer(sync_services.drift_report(cluster)).data)
