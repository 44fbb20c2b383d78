"""Choice constants shared by models, forms, serializers and filters."""

from django.db import models


class ClusterKind(models.TextChoices):
    """Where a cluster's objects come from."""

    DEMO = "demo", "Demo (synthetic)"
    KUBECONFIG = "kubeconfig", "Kubeconfig file"
    IN_CLUSTER = "in-cluster", "In-cluster service account"


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
