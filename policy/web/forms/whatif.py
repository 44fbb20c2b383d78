"""The what-if form: which cluster, which workload, which two configurations.

Input shapes only; :mod:`policy.decisions.whatif` checks the contents (YAML, pods, profiles,
configuration validation) and its errors are put back on these fields.
"""

from __future__ import annotations

from typing import Any

from django import forms

from policy.clusters.models import Cluster
from policy.core.choices import ConfigurationSource, WorkloadSource
from policy.decisions.whatif import MAX_WORKLOAD_BYTES, PRESETS

SAMPLE_WORKLOAD = """\
# A Deployment of 40 replicas; Pods, ReplicaSets, StatefulSets and Jobs are read too.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 40
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {cpu: "1", memory: 2Gi}
"""

SAMPLE_CONFIGURATION = """\
# kube-scheduler's defaults plus Koordinator's LoadAwareScheduling (its default args).
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: LoadAwareScheduling
"""

SIDES = (("baseline", "Baseline (A)"), ("candidate", "Candidate (B)"))
THRESHOLDS_HELP = (
    "Annotate the nodes as a push of the stored node threshold policies would (at the "
    "snapshot's time), instead of as the snapshot has them: what-if for threshold edits."
)


def _yaml_area(rows: int) -> forms.Textarea:
    return forms.Textarea(attrs={"rows": rows, "spellcheck": "false", "class": "code"})


def _side_fields() -> dict[str, forms.Field]:
    """One side of the comparison: where its configuration comes from, a name, the node
    thresholds it sees, and the YAML for the custom source."""
    return {
        "source": forms.ChoiceField(label="Source", choices=ConfigurationSource.choices),
        "preset": forms.ChoiceField(
            required=False,
            label="Preset (derived from the cluster's stored configuration)",
            choices=[("", "— choose a preset —"), *PRESETS.items()],
            help_text="Fills in the YAML below (source: YAML) for this cluster's scheduler "
            "version, to read and edit before running.",
        ),
        "points": forms.IntegerField(
            required=False,
            label="± N percentage points (LoadAware preset)",
            initial=10,
            min_value=-100,
            max_value=100,
        ),
        "label": forms.CharField(required=False, max_length=120, label="Name (optional)"),
        "thresholds": forms.BooleanField(
            required=False,
            label="Node thresholds from the stored node threshold policies",
            help_text=THRESHOLDS_HELP,
        ),
        "yaml": forms.CharField(
            required=False,
            label="YAML (a KubeSchedulerConfiguration; read when the source is YAML)",
            widget=_yaml_area(14),
        ),
    }


class WhatIfForm(forms.Form):
    cluster = forms.ModelChoiceField(
        queryset=Cluster.objects.all(),
        empty_label=None,
        widget=forms.Select(attrs={"data-reload": "cluster"}),
        help_text="The workload is placed on a copy of this cluster's newest snapshot.",
    )
    workload_source = forms.ChoiceField(
        label="Workload",
        choices=WorkloadSource.choices,
        initial=WorkloadSource.MANIFESTS,
        widget=forms.RadioSelect,
    )
    workload = forms.CharField(
        required=False,
        label="Manifests (YAML or JSON, several documents or a List)",
        widget=_yaml_area(16),
    )
    upload = forms.FileField(required=False, label="…or upload a manifest file")
    replay_from = forms.DateTimeField(
        required=False,
        label="Bindings from (UTC)",
        help_text="e.g. 2026-11-27 09:00; a binding is timed by the snapshot it was decided on.",
        widget=forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM"}),
    )
    replay_until = forms.DateTimeField(
        required=False,
        label="until (UTC, not included)",
        widget=forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM"}),
    )
    # The two sides' fields (baseline_source, …, candidate_yaml) are added per instance.

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for side, _ in SIDES:
            for key, field in _side_fields().items():
                self.fields[f"{side}_{key}"] = field

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("upload")
        if upload is None:
            return data
        if upload.size > MAX_WORKLOAD_BYTES:
            self.add_error("upload", f"The file is larger than {MAX_WORKLOAD_BYTES // 1024} KiB.")
            return data
        try:
            data["workload"] = upload.read().decode()
        except UnicodeDecodeError:
            self.add_error("upload", "The file is not UTF-8 text.")
        return data

    def sides(self) -> list[dict[str, Any]]:
        """The two configuration fieldsets, for the template."""
        return [
            {
                "name": name,
                "legend": legend,
                "source": self[f"{name}_source"],
                "preset": self[f"{name}_preset"],
                "points": self[f"{name}_points"],
                "label": self[f"{name}_label"],
                "thresholds": self[f"{name}_thresholds"],
                "yaml": self[f"{name}_yaml"],
            }
            for name, legend in SIDES
        ]
