"""Sync endpoints: push (operators), dry-run plan (operators), refresh (editors and operators),
drift (viewers) and the sync job history (viewers).

- ``POST /api/v1/clusters/{id}/sync/plan/``: the dry-run (200, a finished dry-run job whose
  ``changes`` list every field that would change, object by object, with diffs);
- ``POST /api/v1/clusters/{id}/sync/`` with ``{"plan": <dry-run id>}``: confirm that reviewed
  plan, as the pages do (:func:`policy.sync.services.confirm_push`): 202 with the queued push,
  409 with the new plan when the changes are no longer the reviewed ones, 200 with it when
  there is nothing to push; without ``plan``, queue an unreviewed push (202);
- ``POST /api/v1/clusters/{id}/refresh/``: queue a read-back into a new snapshot (202);
- ``GET /api/v1/clusters/{id}/drift/``: what the last refresh found changed since schedboard
  last wrote it, with diffs, and the snapshot's age;
- ``GET /api/v1/sync-jobs/`` (filters: cluster, kind, status, trigger, created after/before)
  and ``GET /api/v1/sync-jobs/{id}/``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts.roles import CanPushPolicy, IsViewer, _RolePermission
from policy.api.sync.serializers import (
    ConfirmationConflictSerializer,
    DriftReportSerializer,
    PushRequestSerializer,
    SyncJobSerializer,
)
from policy.clusters.models import Cluster
from policy.core.choices import Role
from policy.sync import services as sync_services
from policy.sync.filters import SyncJobFilterSet
from policy.sync.models import SyncJob, SyncJobStatus


class CanRefresh(_RolePermission):
    """Editors and operators: a refresh reads the cluster (API load), it writes nothing."""

    read_role = write_role = Role.EDITOR


class SyncJobViewSet(viewsets.ReadOnlyModelViewSet[SyncJob]):
    """Every push, refresh and dry-run: status, timings, error, what changed and the log."""

    queryset = SyncJob.objects.select_related("requested_by")
    serializer_class = SyncJobSerializer
    filterset_class = SyncJobFilterSet
    ordering_fields = ["created", "finished", "id"]
    ordering = ["-created", "-id"]
    permission_classes = [IsViewer]


STALE = "not pushed: the changes differ from the reviewed plan; review the new plan"


class ClusterSyncView(APIView):
    """Push the cluster's policies (operators). With ``{"plan": <dry-run id>}`` (the reviewed
    dry-run) the cluster is planned again: 202 with the queued push, limited to that plan's
    changes; 409 with the new plan when they changed; 200 with it when there is nothing to
    push; 502 when the cluster cannot be read. Without ``plan``, 202 with a queued push (one
    already waiting is reused)."""

    permission_classes = [CanPushPolicy]

    @extend_schema(
        request=PushRequestSerializer,
        responses={
            202: SyncJobSerializer,
            200: SyncJobSerializer,
            409: ConfirmationConflictSerializer,
            502: SyncJobSerializer,
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        if "dry_run" in request.query_params:
            raise serializers.ValidationError(
                {"dry_run": ["not supported: POST …/sync/plan/ answers the dry-run"]}
            )
        given = PushRequestSerializer(data=request.data or {})
        given.is_valid(raise_exception=True)
        if "plan" not in given.validated_data:
            job = sync_services.push(cluster, user=request.user)
            return Response(SyncJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
        acknowledged = given.validated_data["acknowledge_attention"]
        return _confirm(cluster, given.validated_data["plan"], request, acknowledged)


def _confirm(cluster: Cluster, plan_id: int, request: Request, acknowledged: bool) -> Response:
    try:
        confirmed = sync_services.confirm_push(
            cluster, plan_id, user=request.user, acknowledged=acknowledged
        )
    except sync_services.UnknownPlan as exc:
        raise serializers.ValidationError({"plan": [str(exc)]}) from exc
    if confirmed.outcome == "unacknowledged":
        reasons = "; ".join(confirmed.attention)
        raise serializers.ValidationError(
            {
                "acknowledge_attention": [
                    f"this plan needs attention ({reasons}): confirm it with "
                    "acknowledge_attention: true"
                ]
            }
        )
    if confirmed.job is not None:
        return Response(SyncJobSerializer(confirmed.job).data, status=status.HTTP_202_ACCEPTED)
    fresh = SyncJobSerializer(confirmed.plan).data
    if confirmed.outcome == "stale":
        return Response({"detail": STALE, "plan": fresh}, status=status.HTTP_409_CONFLICT)
    return Response(fresh, status=502 if confirmed.outcome == "plan-failed" else 200)


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
