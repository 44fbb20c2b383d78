"""What each policy editor edits: the model, its service and form, its parent, how it
renders, and how its pages name it (one registry the editor, import, merge and sync views
share)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models
from django.http import Http404

from policy.clusters.models import Cluster
from policy.core.models import VersionedModel
from policy.policies import services as policies
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.web.forms import policies as pf
from policy.web.presenters import policies as ui


@dataclass(frozen=True)
class Editor:
    slug: str
    noun: str
    model: type[VersionedModel]
    service: policies.PolicyService[Any]
    form: type[pf.PolicyForm]
    parent_field: str
    parent_model: type[models.Model]
    render: Callable[[Cluster], ui.Rendered]
    cluster_of_parent: Callable[[Any], Cluster]

    def cluster_of(self, obj: Any) -> Cluster:
        return self.cluster_of_parent(getattr(obj, self.parent_field))

    def short_label(self, obj: Any) -> str:
        """For breadcrumbs: the label without the cluster (which the crumb before names)."""
        if isinstance(obj, SchedulerConfiguration):
            return "Scheduler configuration"
        return self.label(obj)

    def label(self, obj: Any) -> str:
        """The object's name as a title starts with it (capitalised)."""
        text = self.phrase(obj)
        return text[:1].upper() + text[1:]

    def phrase(self, obj: Any) -> str:
        """The object's name inside a sentence: "scheduler configuration of cluster staging",
        "profile batch", "LoadAware args of profile batch"."""
        if isinstance(obj, SchedulerConfiguration):
            return f"scheduler configuration of cluster {obj.cluster.name}"
        if isinstance(obj, SchedulerProfile):
            return f"profile {obj}"
        if isinstance(obj, LoadAwareSchedulingArgs):
            return f"LoadAware args of profile {obj.profile}"
        return f"{self.noun} {obj}"

    def new_title(self, parent: Any) -> str:
        """The title of a new object's page: "New profile in scheduler configuration of
        cluster staging", "New node threshold policy of cluster staging", "New LoadAware args
        for profile batch"."""
        if isinstance(parent, Cluster):
            return f"New {self.noun} of cluster {parent.name}"
        if isinstance(parent, SchedulerProfile):
            return f"New {self.noun} for profile {parent}"
        return f"New {self.noun} in {self.phrase(parent)}"


def _config_cluster(configuration: SchedulerConfiguration) -> Cluster:
    return configuration.cluster


EDITORS: dict[str, Editor] = {
    editor.slug: editor
    for editor in (
        Editor(
            "configurations",
            "scheduler configuration",
            SchedulerConfiguration,
            policies.SchedulerConfigurationService(),
            pf.SchedulerConfigurationForm,
            "cluster",
            Cluster,
            ui.render_configuration,
            lambda cluster: cluster,
        ),
        Editor(
            "profiles",
            "profile",
            SchedulerProfile,
            policies.ProfileService(),
            pf.SchedulerProfileForm,
            "configuration",
            SchedulerConfiguration,
            ui.render_configuration,
            _config_cluster,
        ),
        Editor(
            "loadaware",
            "LoadAware args",
            LoadAwareSchedulingArgs,
            policies.LoadAwareArgsService(),
            pf.LoadAwareArgsForm,
            "profile",
            SchedulerProfile,
            ui.render_configuration,
            lambda profile: profile.configuration.cluster,
        ),
        Editor(
            "thresholds",
            "node threshold policy",
            NodeThresholdPolicy,
            policies.NodeThresholdPolicyService(),
            pf.NodeThresholdPolicyForm,
            "cluster",
            Cluster,
            ui.render_thresholds,
            lambda cluster: cluster,
        ),
        Editor(
            "collect",
            "collect policy",
            NodeMetricCollectPolicy,
            policies.CollectPolicyService(),
            pf.CollectPolicyForm,
            "cluster",
            Cluster,
            ui.render_colocation,
            lambda cluster: cluster,
        ),
    )
}


def editor_for(kind: str) -> Editor:
    """The editor of policy kind ``kind`` (a 404 for an unknown kind)."""
    try:
        return EDITORS[kind]
    except KeyError:
        raise Http404(f"No policy kind {kind!r}.") from None
