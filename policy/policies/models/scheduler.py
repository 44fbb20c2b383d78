"""A cluster's kube-scheduler configuration: global settings and profiles.

The models hold what the user wrote (unset fields stay unset, so kube-scheduler's defaults
apply); :meth:`SchedulerConfiguration.to_document` renders them as the v1
``KubeSchedulerConfiguration`` the engine validates and kube-scheduler reads
(:mod:`policy.policies.documents`).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from policy.clusters.models import Cluster
from policy.core.models import VersionedModel
from policy.core.validators import json_validator
from policy.policies import documents
from policy.policies.documents import BuiltDocument
from scoring import INT32_MAX, INT32_MIN

_INT32 = [MinValueValidator(INT32_MIN), MaxValueValidator(INT32_MAX)]


class SchedulerConfiguration(VersionedModel):
    """The ``KubeSchedulerConfiguration`` of one cluster (its global fields; profiles below).

    ``version`` also grows when a profile or its LoadAware args change, so it identifies the
    whole document: evaluations and decisions record it.
    """

    SNAPSHOT_FIELDS = (
        "cluster",
        "description",
        "parallelism",
        "percentage_of_nodes_to_score",
        "pod_initial_backoff_seconds",
        "pod_max_backoff_seconds",
        "enable_profiling",
        "enable_contention_profiling",
        "delay_cache_until_active",
        "leader_election",
        "client_connection",
        "extenders",
        "source_document",
    )

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, related_name="scheduler_configuration"
    )
    description = models.CharField(max_length=2000, blank=True)
    parallelism = models.IntegerField(
        null=True,
        blank=True,
        validators=_INT32,
        help_text="parallelism: scheduling threads (default 16; must be > 0).",
    )
    percentage_of_nodes_to_score = models.IntegerField(
        null=True,
        blank=True,
        validators=_INT32,
        help_text="percentageOfNodesToScore, 0-100 (default 0: adaptive).",
    )
    pod_initial_backoff_seconds = models.BigIntegerField(
        null=True, blank=True, help_text="podInitialBackoffSeconds (default 1; must be > 0)."
    )
    pod_max_backoff_seconds = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="podMaxBackoffSeconds (default 10; must be >= podInitialBackoffSeconds).",
    )
    enable_profiling = models.BooleanField(
        null=True, blank=True, help_text="enableProfiling (default true)."
    )
    enable_contention_profiling = models.BooleanField(
        null=True, blank=True, help_text="enableContentionProfiling (default true)."
    )
    delay_cache_until_active = models.BooleanField(
        default=False, help_text="delayCacheUntilActive (default false)."
    )
    leader_election = models.JSONField(
        default=dict,
        blank=True,
        validators=[json_validator(16 * 1024)],
        help_text="leaderElection, as in v1 (leaderElect, leaseDuration, renewDeadline, "
        "retryPeriod, resourceLock, resourceName, resourceNamespace); {} for the defaults.",
    )
    client_connection = models.JSONField(
        default=dict,
        blank=True,
        validators=[json_validator(16 * 1024)],
        help_text="clientConnection, as in v1 (kubeconfig, acceptContentTypes, contentType, qps, "
        "burst); {} for the defaults.",
    )
    extenders = models.JSONField(
        default=list,
        blank=True,
        validators=[json_validator()],
        help_text="extenders, as in v1 (a list of Extender objects).",
    )
    source_document = models.JSONField(
        null=True,
        blank=True,
        validators=[json_validator()],
        help_text="The document as imported or adopted from the cluster (any config version, "
        "sparse); what is written is this document with the edits made here applied.",
    )

    class Meta:
        ordering = ["cluster__name"]

    def __str__(self) -> str:
        return f"scheduler configuration of {self.cluster}"

    def tree(self) -> dict[str, Any]:
        """The configuration (with its version), its profiles and their args as one JSON tree:
        what the history stores and the documents are built from."""
        profiles = []
        for profile in self.profiles.order_by("position", "id"):
            entry: dict[str, Any] = {"id": profile.pk, **profile.snapshot()}
            try:
                args = profile.loadaware_args
            except ObjectDoesNotExist:
                entry["loadaware_args"] = None
            else:
                entry["loadaware_args"] = {"id": args.pk, **args.snapshot()}
            profiles.append(entry)
        return {"id": self.pk, "version": self.version, **self.snapshot(), "profiles": profiles}

    def build(self) -> BuiltDocument:
        return documents.build_document(self.tree())

    def to_document(self) -> dict[str, Any]:
        """The v1 ``KubeSchedulerConfiguration`` (not defaulted), LoadAware args included."""
        return self.build().document

    def written_document(self) -> dict[str, Any]:
        """The document written to the cluster: as imported or adopted, in its own apiVersion,
        with the edits made here (:func:`policy.policies.documents.written_document`)."""
        return documents.written_document(self.tree())

    @property
    def api_version(self) -> str:
        return documents.source_api_version(self.source_document)


class SchedulerProfile(VersionedModel):
    """One ``KubeSchedulerProfile``. ``plugins`` and ``plugin_config`` keep the v1 JSON shape;
    LoadAwareScheduling's args are a typed object of their own
    (:class:`~policy.policies.models.LoadAwareSchedulingArgs`)."""

    SNAPSHOT_FIELDS = (
        "configuration",
        "position",
        "scheduler_name",
        "percentage_of_nodes_to_score",
        "plugins",
        "plugin_config",
    )

    configuration = models.ForeignKey(
        SchedulerConfiguration, on_delete=models.CASCADE, related_name="profiles"
    )
    position = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(10_000)],
        help_text="Order among the configuration's profiles (the first one's queueSort is the "
        "one every profile must share).",
    )
    scheduler_name = models.CharField(
        max_length=253,
        blank=True,
        help_text="schedulerName: pods with spec.schedulerName equal to it use this profile. "
        "Empty: default-scheduler, allowed only when it is the only profile.",
    )
    percentage_of_nodes_to_score = models.IntegerField(
        null=True,
        blank=True,
        validators=_INT32,
        help_text="percentageOfNodesToScore for this profile, 0-100; empty: the global value.",
    )
    plugins = models.JSONField(
        default=dict,
        blank=True,
        validators=[json_validator(64 * 1024)],
        help_text="plugins, as in v1: per extension point (multiPoint, queueSort, preFilter, "
        "filter, postFilter, preScore, score, reserve, permit, preBind, bind, postBind, "
        "preEnqueue) the enabled and disabled plugins, with score weights.",
    )
    plugin_config = models.JSONField(
        default=list,
        blank=True,
        validators=[json_validator()],
        help_text="pluginConfig, as in v1 ([{name, args}]), except LoadAwareScheduling whose "
        "args are the profile's loadaware-args object. Unknown plugins' args are kept as given.",
    )

    class Meta:
        ordering = ["configuration", "position", "id"]

    def __str__(self) -> str:
        return self.scheduler_name or "default-scheduler"

    def cluster_id_for_history(self) -> int | None:
        return self.configuration.cluster_id
