"""Choice constants shared by models, forms, serializers and filters."""

from django.db import models


class ClusterKind(models.TextChoices):
    """Where a cluster's objects come from."""

    DEMO = "demo", "Demo (synthetic)"
    KUBECONFIG = "kubeconfig", "Kubeconfig file"
    IN_CLUSTER = "in-cluster", "In-cluster service account"


# The kinds with an API server to connect to (``add_cluster``, ``POST /api/v1/clusters/``).
CONNECTABLE_KINDS = [
    (ClusterKind.KUBECONFIG.value, ClusterKind.KUBECONFIG.label),
    (ClusterKind.IN_CLUSTER.value, ClusterKind.IN_CLUSTER.label),
]


class Role(models.TextChoices):
    """Roles are Django groups of these names, created by a data migration.

    Ordered: each role includes the rights of the ones before it.
    """

    VIEWER = "viewer", "Viewer: read everything"
    EDITOR = "editor", "Editor: edit policies"
    OPERATOR = "operator", "Operator: edit and push policies to clusters"


class DecisionOutcome(models.TextChoices):
    SCHEDULED = "scheduled", "A node was selected"
    UNSCHEDULABLE = "unschedulable", "No node fits"
    ERROR = "error", "A plugin failed the cycle"


class DecisionSource(models.TextChoices):
    API = "api", "REST API"
    UI = "ui", "Web UI"
    WORKER = "worker", "Background evaluation of a pending pod"
    CLUSTER = "cluster", "What the cluster's scheduler did"


class Agreement(models.TextChoices):
    """A ``cluster`` decision: did the engine's choice match the scheduler's?"""

    AGREES = "agrees", "The scheduler's node is among the engine's best"
    DISAGREES = "disagrees", "The engine ranked the scheduler's node lower, or filtered it"


class PushMode(models.TextChoices):
    """When a cluster's policies are written to it."""

    MANUAL = "manual", "Manual: an operator pushes"
    AUTOMATIC = "automatic", "Automatic: every saved change is pushed"


class ChangeAction(models.TextChoices):
    """What a :class:`~policy.accounts.models.PolicyChange` records."""

    CREATE = "create", "Created"
    UPDATE = "update", "Updated"
    DELETE = "delete", "Deleted"
    REVERT = "revert", "Reverted"
    IMPORT = "import", "Imported"


class ChangeSource(models.TextChoices):
    """Where a change (or a refused request) came from."""

    UI = "ui", "Web UI"
    API = "api", "API (session)"
    TOKEN = "token", "API (token)"
    SYSTEM = "system", "System (command or task)"


class WhatIfStatus(models.TextChoices):
    """Where a what-if comparison is."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class WorkloadSource(models.TextChoices):
    """What a what-if comparison places."""

    MANIFESTS = "manifests", "Manifests (Pods, Deployments, ReplicaSets, StatefulSets, Jobs)"
    PENDING = "pending", "The snapshot's pending pods"
    HISTORY = "history", "The bindings the cluster's scheduler made between two times (replayed)"


class ConfigurationSource(models.TextChoices):
    """Which scheduler configuration one side of a what-if comparison uses."""

    STORED = "stored", "The cluster's stored configuration"
    DEFAULTS = "defaults", "kube-scheduler's defaults"
    CUSTOM = "custom", "A KubeSchedulerConfiguration (YAML)"


class SyncJobKind(models.TextChoices):
    PUSH = "push", "Push policies to the cluster"
    REFRESH = "refresh", "Read the cluster back into a snapshot"
    DRY_RUN = "dry-run", "Plan a push without writing"


class SyncJobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class SyncJobTrigger(models.TextChoices):
    OPERATOR = "operator", "Requested by an operator"
    AUTOMATIC = "automatic", "A policy changed (automatic push mode)"
    TIME_WINDOW = "time-window", "A threshold time window opened or closed"
    SCHEDULE = "schedule", "Periodic task"
    AFTER_PUSH = "after-push", "Read back after a push"
