"""Cluster serializers: validation and representation only; changes go through services."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from policy.api.fields import SnapshotRefSerializer
from policy.api.strict import ModelSerializer, StrictCharField
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import CONNECTABLE_KINDS
from policy.sync.connect import parse_configmap


class SnapshotCountsSerializer(ModelSerializer[ClusterSnapshot]):
    class Meta:
        model = ClusterSnapshot
        fields = [
            "id",
            "taken_at",
            "node_count",
            "pod_count",
            "pending_pod_count",
            "node_metric_count",
            "topology_count",
        ]


class ClusterSerializer(serializers.HyperlinkedModelSerializer[Cluster]):
    """Connection fields are set by administrators; operators change where and when the
    cluster's policies are written."""

    url = serializers.HyperlinkedIdentityField(view_name="api:cluster-detail")
    latest_snapshot = serializers.SerializerMethodField()
    scheduler_target = serializers.SerializerMethodField(
        help_text="flavor@version the configuration is checked and rendered for: "
        "scheduler_flavor/scheduler_version when set, else detected_scheduler_target; null: "
        "inferred from the configuration itself."
    )

    class Meta:
        model = Cluster
        fields = [
            "id",
            "url",
            "name",
            "kind",
            "kubeconfig_path",
            "kubeconfig_context",
            "version",
            "scheduler_config_namespace",
            "scheduler_config_name",
            "scheduler_config_key",
            "slo_config_namespace",
            "slo_config_name",
            "descheduler_config_namespace",
            "descheduler_config_name",
            "descheduler_config_key",
            "push_mode",
            "refresh_interval_seconds",
            "timezone",
            "scheduler_flavor",
            "scheduler_version",
            "detected_scheduler_target",
            "scheduler_target",
            "created",
            "updated",
            "latest_snapshot",
        ]
        read_only_fields = [
            "detected_scheduler_target",
            "name",
            "kind",
            "kubeconfig_path",
            "kubeconfig_context",
            "version",
            "created",
            "updated",
        ]

    def get_scheduler_target(self, cluster: Cluster) -> str | None:
        target = cluster.scheduler_target()
        return str(target) if target is not None else None

    def get_latest_snapshot(self, cluster: Cluster) -> dict[str, Any] | None:
        # ClusterViewSet prefetches the snapshots (newest first, without their objects).
        snapshots = getattr(cluster, "snapshot_list", None)
        latest = snapshots[0] if snapshots else cluster.latest_snapshot()
        return SnapshotCountsSerializer(latest).data if latest else None


class ConnectClusterSerializer(serializers.Serializer[Any]):
    """What ``POST /api/v1/clusters/`` needs to reach a cluster (superusers only: a kubeconfig
    path names a file on this server)."""

    name = serializers.SlugField(max_length=63)
    kind = serializers.ChoiceField(choices=CONNECTABLE_KINDS)
    kubeconfig_path = StrictCharField(max_length=1024, required=False, default="")
    kubeconfig_context = StrictCharField(max_length=253, required=False, default="")
    scheduler_configmap = StrictCharField(
        max_length=600,
        required=False,
        default="",
        help_text="NAMESPACE/NAME[:KEY] of the scheduler's ConfigMap; empty: looked for in "
        "the usual places (Koordinator's, scheduler-plugins', kube-scheduler's).",
    )
    descheduler_configmap = StrictCharField(
        max_length=600,
        required=False,
        default="",
        help_text="NAMESPACE/NAME[:KEY] of koord-descheduler's ConfigMap; empty: where "
        "Koordinator's chart puts it (koordinator-system/koord-descheduler-config).",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] == "kubeconfig" and not data["kubeconfig_path"]:
            raise serializers.ValidationError({"kubeconfig_path": ["Required for kubeconfig."]})
        if data["scheduler_configmap"]:
            try:
                data["scheduler_configmap"] = parse_configmap(data["scheduler_configmap"])
            except ValueError as exc:
                raise serializers.ValidationError({"scheduler_configmap": [str(exc)]}) from None
        else:
            data["scheduler_configmap"] = None
        if data["descheduler_configmap"]:
            try:
                data["descheduler_configmap"] = parse_configmap(
                    data["descheduler_configmap"], "koord-descheduler-config"
                )
            except ValueError as exc:
                raise serializers.ValidationError({"descheduler_configmap": [str(exc)]}) from None
        else:
            data["descheduler_configmap"] = None
        return data


class ConnectionReportSerializer(serializers.Serializer[Any]):
    server_version = StrictCharField()
    scheduler_configmap = StrictCharField(help_text="NAMESPACE/NAME:KEY")
    discovered = serializers.BooleanField(help_text="Found in one of the usual places.")
    missing_permissions = serializers.ListField(
        child=StrictCharField(), help_text="What schedboard may not do there yet."
    )


class ConnectedClusterSerializer(ClusterSerializer):
    connection = ConnectionReportSerializer(read_only=True)

    class Meta(ClusterSerializer.Meta):
        fields = [*ClusterSerializer.Meta.fields, "connection"]


class PolicyRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = StrictCharField()
    priority = serializers.IntegerField()


class NodeThresholdRowSerializer(serializers.Serializer[Any]):
    node = StrictCharField()
    value = StrictCharField(
        allow_null=True, help_text="The annotation value; null: no policy applies (absent)."
    )
    policy = PolicyRefSerializer(allow_null=True, help_text="The winning policy.")
    matching = serializers.ListField(
        child=StrictCharField(), help_text="Every enabled policy targeting the node."
    )
    current = StrictCharField(
        allow_null=True,
        help_text="The annotation the node carries in the snapshot; null: the args govern.",
    )
    owned = serializers.BooleanField(help_text="schedboard wrote `current`.")
    governed_by = StrictCharField(help_text="Who decides the node's thresholds now.")
    push = serializers.ChoiceField(
        choices=["keep", "write", "remove", "leave"],
        help_text="What a push does: keep (already so), write `value`, remove schedboard's "
        "own, or leave someone else's annotation alone (`value` then does not apply).",
    )
    reason = StrictCharField(help_text="Why, in a sentence.")


class NodeThresholdRenderSerializer(serializers.Serializer[Any]):
    cluster = serializers.IntegerField()
    snapshot = SnapshotRefSerializer()
    at = serializers.DateTimeField(help_text="The time evaluated, in the cluster's time zone.")
    annotation = StrictCharField()
    nodes = NodeThresholdRowSerializer(many=True)


class ColocationRenderSerializer(serializers.Serializer[Any]):
    namespace = StrictCharField()
    name = StrictCharField()
    key = StrictCharField()
    content = serializers.JSONField(help_text="The colocation-config fields schedboard manages.")
    text = StrictCharField(help_text="The same, as the JSON text of the ConfigMap key.")
    notes = serializers.ListField(child=StrictCharField())
