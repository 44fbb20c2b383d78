"""Clusters schedboard knows about, and point-in-time snapshots of their objects."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Cast

from policy.clusters.object_changes import apply_changes
from policy.core.choices import ClusterKind, PushMode
from policy.core.models import VersionedModel
from policy.core.validators import (
    configmap_key_validator,
    dns1123_label_validator,
    dns1123_subdomain_validator,
    timezone_validator,
)
from scoring import FLAVORS, InputError, Target, parse_target, stream_json_items


class Cluster(VersionedModel):
    """A Kubernetes cluster: synthetic (demo), reached through a kubeconfig, or in-cluster,
    with where its policies are written and when."""

    SNAPSHOT_FIELDS = (
        "name",
        "kind",
        "kubeconfig_path",
        "kubeconfig_context",
        "scheduler_config_namespace",
        "scheduler_config_name",
        "scheduler_config_key",
        "slo_config_namespace",
        "slo_config_name",
        "push_mode",
        "refresh_interval_seconds",
        "timezone",
        "scheduler_flavor",
        "scheduler_version",
        "descheduler_config_namespace",
        "descheduler_config_name",
        "descheduler_config_key",
    )

    name = models.SlugField(max_length=63, unique=True)
    kind = models.CharField(max_length=16, choices=ClusterKind.choices, default=ClusterKind.DEMO)
    kubeconfig_path = models.CharField(
        max_length=1024, blank=True, help_text="Path of the kubeconfig file on the server."
    )
    kubeconfig_context = models.CharField(
        max_length=253, blank=True, help_text="Context to use; empty means the current one."
    )
    scheduler_config_namespace = models.CharField(
        max_length=63,
        default="koordinator-system",
        validators=[dns1123_label_validator],
        help_text="Namespace of the ConfigMap holding the KubeSchedulerConfiguration "
        "(default: where Koordinator's chart puts koord-scheduler's, as deploy/rbac.yaml grants).",
    )
    scheduler_config_name = models.CharField(
        max_length=253,
        default="koord-scheduler-config",
        validators=[dns1123_subdomain_validator],
        help_text="Name of that ConfigMap.",
    )
    scheduler_config_key = models.CharField(
        max_length=253,
        default="koord-scheduler-config",
        validators=[configmap_key_validator],
        help_text="The ConfigMap key the configuration YAML is written to.",
    )
    slo_config_namespace = models.CharField(
        max_length=63,
        default="koordinator-system",
        validators=[dns1123_label_validator],
        help_text="Namespace of Koordinator's slo-controller ConfigMap (NodeMetric collect "
        "policies).",
    )
    slo_config_name = models.CharField(
        max_length=253,
        default="slo-controller-config",
        validators=[dns1123_subdomain_validator],
        help_text="Name of Koordinator's slo-controller ConfigMap.",
    )
    descheduler_config_namespace = models.CharField(
        max_length=63,
        default="koordinator-system",
        validators=[dns1123_label_validator],
        help_text="Namespace of the ConfigMap holding koord-descheduler's "
        "DeschedulerConfiguration (default: where Koordinator's chart puts it).",
    )
    descheduler_config_name = models.CharField(
        max_length=253,
        default="koord-descheduler-config",
        validators=[dns1123_subdomain_validator],
        help_text="Name of that ConfigMap.",
    )
    descheduler_config_key = models.CharField(
        max_length=253,
        default="koord-descheduler-config",
        validators=[configmap_key_validator],
        help_text="The ConfigMap key holding the DeschedulerConfiguration YAML.",
    )
    refresh_interval_seconds = models.PositiveIntegerField(
        default=60,
        validators=[MaxValueValidator(86_400)],
        help_text="Read the cluster back every this many seconds (0: only when asked). A "
        "refresh that finds nothing changed stores no new snapshot.",
    )
    push_mode = models.CharField(
        max_length=16,
        choices=PushMode.choices,
        default=PushMode.MANUAL,
        help_text="manual: an operator pushes; automatic: every saved policy change is pushed.",
    )
    timezone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[timezone_validator],
        help_text="IANA time zone of the node threshold policies' time windows "
        "(e.g. Europe/Paris).",
    )

    scheduler_flavor = models.CharField(
        max_length=32,
        blank=True,
        choices=[(flavor, flavor) for flavor in FLAVORS],
        help_text="The scheduler binary that reads the configuration (kube-scheduler, "
        "koord-scheduler, scheduler-plugins, custom); empty: the one detected from the cluster.",
    )
    scheduler_version = models.CharField(
        max_length=32,
        blank=True,
        help_text="Its release (1.28 for kube-scheduler and custom, 1.7 for koord-scheduler, "
        "0.35 for scheduler-plugins); empty: the newest that reads the configuration.",
    )
    detected_scheduler_target = models.CharField(
        max_length=64,
        blank=True,
        editable=False,
        help_text="flavor@version the engine infers from the scheduler ConfigMap's document "
        "(its apiVersion and plugins), at the last refresh that read it.",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(kind=ClusterKind.KUBECONFIG) | ~Q(kubeconfig_path=""),
                name="cluster_kubeconfig_kind_needs_path",
                violation_error_message="A kubeconfig cluster needs a kubeconfig path.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.kind != ClusterKind.KUBECONFIG and self.kubeconfig_path:
            raise ValidationError(
                {"kubeconfig_path": f"Only kubeconfig clusters use a path (kind is {self.kind})."}
            )
        if self.scheduler_version and not self.scheduler_flavor:
            raise ValidationError({"scheduler_version": "Set the scheduler flavor too."})
        if self.scheduler_flavor:
            try:
                parse_target(self._set_target())
            except InputError as exc:
                raise ValidationError({"scheduler_version": str(exc)}) from None

    def _set_target(self) -> str:
        version = self.scheduler_version.strip()
        return f"{self.scheduler_flavor}@{version}" if version else self.scheduler_flavor

    def scheduler_target(self) -> Target | None:
        """The scheduler the configuration is for: the operators' setting, else the one
        detected from the cluster; None: inferred from the document itself."""
        text = self._set_target() if self.scheduler_flavor else self.detected_scheduler_target
        if not text:
            return None
        try:
            return parse_target(text)
        except InputError:
            return None

    def latest_snapshot(self) -> ClusterSnapshot | None:
        """The newest snapshot, without its (possibly large) object list loaded."""
        return self.snapshots.summaries().first()


class SnapshotQuerySet(models.QuerySet["ClusterSnapshot"]):
    def summaries(self) -> SnapshotQuerySet:
        """Snapshots with counts only: their objects can be tens of megabytes of JSON."""
        return self.defer("stored_objects", "changes", "scheduling_failures")


class ClusterSnapshot(models.Model):
    """The Kubernetes objects of a cluster at ``taken_at``, as ``kubectl get -o json`` lists
    them (Nodes, Pods, NodeMetrics, NodeResourceTopologies), with their counts.

    A *keyframe* stores every object. A refresh that knows what changed since the newest
    snapshot stores only that (``changes``: the objects added or modified, the keys deleted)
    against the same ``keyframe``, so a large cluster's minute-by-minute history costs what
    changed. :attr:`objects` gives the whole list either way (policy.clusters.snapshot_chains).
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="snapshots")
    taken_at = models.DateTimeField()
    stored_objects = models.JSONField(
        default=list,
        db_column="objects",
        help_text="List of Kubernetes objects (keyframes; empty when ``changes`` is set).",
    )
    keyframe = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        # A chain goes with its keyframe (a deleted cluster takes all); pruning removes only
        # whole chains (policy.clusters.snapshot_chains), so no kept snapshot loses its keyframe.
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The snapshot holding every object that ``changes`` apply to (with the "
        "changes of the chain's earlier snapshots); empty for a keyframe.",
    )
    changes = models.JSONField(
        null=True,
        blank=True,
        help_text='Since the previous snapshot of the chain: {"put": [objects], '
        '"delete": [[kind, namespace, name]]}.',
    )
    scheduling_failures = models.JSONField(
        null=True,
        blank=True,
        help_text="Pods' newest FailedScheduling messages by namespace/name, read when the "
        "snapshot was stored (empty for snapshots stored before they were kept).",
    )
    node_count = models.PositiveIntegerField(default=0)
    pod_count = models.PositiveIntegerField(default=0, help_text="Pods bound to a node.")
    pending_pod_count = models.PositiveIntegerField(default=0)
    node_metric_count = models.PositiveIntegerField(default=0)
    topology_count = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    # ``objects`` is the snapshot's object list, so the manager needs another name.
    snapshots = SnapshotQuerySet.as_manager()

    class Meta:
        ordering = ["-taken_at", "-id"]
        get_latest_by = "taken_at"
        indexes = [models.Index(fields=["cluster", "-taken_at"], name="snapshot_cluster_taken")]

    def __str__(self) -> str:
        return f"{self.cluster_id} @ {self.taken_at:%Y-%m-%d %H:%M:%S}"

    @cached_property
    def objects(self) -> list[dict[str, Any]]:
        """Every object of this snapshot (a chain's snapshot is put together on first use)."""
        return self.read_objects()

    def iter_objects(self) -> Iterator[Mapping[str, Any]]:
        """Every object of this snapshot, as :meth:`read_objects` gives them; a keyframe's
        are decoded one at a time from its JSON text (a 5,000-node keyframe is 60,000 objects,
        about 300 MiB decoded at once), so a reader that keeps less never holds them all."""
        if self.keyframe_id is not None:
            yield from self.read_objects()
            return
        text = (
            type(self)
            .snapshots.annotate(text=Cast("stored_objects", output_field=models.TextField()))
            .values_list("text", flat=True)
            .get(pk=self.pk)
        )
        yield from stream_json_items(text)

    def read_objects(self) -> list[dict[str, Any]]:
        """Every object of this snapshot, from the database (two queries for a chain's
        snapshot, one for a keyframe)."""
        rows = type(self).snapshots
        if self.keyframe_id is None:
            stored: list[dict[str, Any]] = rows.values_list("stored_objects", flat=True).get(
                pk=self.pk
            )
            return stored
        base = rows.values_list("stored_objects", flat=True).get(pk=self.keyframe_id)
        steps = (
            rows.filter(keyframe_id=self.keyframe_id, id__lte=self.pk)
            .order_by("id")
            .values_list("changes", flat=True)
        )
        return apply_changes(base, (step or {} for step in steps))

    def counts(self) -> dict[str, Any]:
        return {
            "nodes": self.node_count,
            "pods": self.pod_count,
            "pending_pods": self.pending_pod_count,
            "node_metrics": self.node_metric_count,
            "node_resource_topologies": self.topology_count,
        }
