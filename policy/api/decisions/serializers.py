"""Serializers of the decisions API: evaluation requests, decisions and what-if comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from policy.api.strict import ModelSerializer, StrictCharField
from policy.clusters.models import Cluster
from policy.core.choices import ConfigurationSource, WorkloadSource
from policy.decisions import evaluation, whatif
from policy.decisions.models import PlacementDecision, WhatIfRun
from scoring import NodeSelection


class PodField(serializers.JSONField):
    """A Pod manifest as a JSON object, or as YAML/JSON text (as ``kubectl`` prints it)."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(evaluation.pod_manifest(data))
        except evaluation.EvaluationError as exc:
            raise serializers.ValidationError(str(exc)) from None


class EvaluateRequestSerializer(serializers.Serializer[Any]):
    pod = PodField(
        help_text="The v1 Pod to place (object, or YAML/JSON text); or a Deployment, ReplicaSet, "
        "StatefulSet or Job, whose controller's first pod is placed."
    )
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


# -- what-if comparisons ------------------------------------------------------------------------


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
    replay_from = serializers.DateTimeField(
        required=False,
        help_text="With workload_source history: the first binding's earliest time (bindings "
        "are timed by the snapshot they were decided on).",
    )
    replay_until = serializers.DateTimeField(
        required=False, help_text="With workload_source history: bindings before this time."
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
            "replay_from",
            "replay_until",
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
