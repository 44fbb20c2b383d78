"""Forms of the pages (input checks only; the evaluation service does the work)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.text import capfirst

from policy.clusters.models import Cluster
from policy.decisions import evaluation

MAX_MANIFEST = evaluation.MAX_POD_TEXT  # an uploaded file's bytes


def parse_manifest(text: str) -> dict[str, Any]:
    """A Pod manifest from YAML or JSON text; ``forms.ValidationError`` says what is wrong."""
    try:
        return evaluation.pod_manifest(text)
    except evaluation.EvaluationError as exc:
        raise forms.ValidationError(f"{capfirst(str(exc))}.") from None


class EvaluateForm(forms.Form):
    """Which cluster, which pod (pasted, uploaded or pending in the snapshot), which profile."""

    cluster = forms.ModelChoiceField(
        queryset=Cluster.objects.all(),
        empty_label=None,
        widget=forms.Select(attrs={"data-reload": "cluster"}),
        help_text="Pending pods and profiles follow the cluster.",
    )
    configuration = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        help_text="The cluster's scheduler configuration; without one, kube-scheduler's defaults.",
    )
    profile = forms.ChoiceField(
        required=False,
        help_text="Overrides the pod's spec.schedulerName; empty keeps the manifest's.",
    )
    pending = forms.ChoiceField(
        required=False, label="Pending pod", help_text="A pod waiting for a node in the snapshot."
    )
    manifest = forms.CharField(
        required=False,
        label="Pod manifest (YAML or JSON)",
        help_text="A Pod, or a Deployment, ReplicaSet, StatefulSet or Job: the first pod its "
        "controller would make is evaluated.",
        widget=forms.Textarea(
            attrs={
                "rows": 14,
                "spellcheck": "false",
                "placeholder": "apiVersion: v1\nkind: Pod\n"
                "metadata: {name: web-1, namespace: default}\nspec: ...",
            }
        ),
    )
    upload = forms.FileField(required=False, label="…or upload a manifest file")

    def __init__(
        self,
        *args: Any,
        configurations: list[tuple[int, str]],
        profiles: list[str],
        pending: list[str],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.pending_pods = pending
        fields: Any = self.fields
        fields["configuration"].choices = [("", "Newest / defaults"), *configurations]
        fields["profile"].choices = [("", "From the pod (spec.schedulerName)")] + [
            (name, name) for name in profiles
        ]
        fields["pending"].choices = [("", "—")] + [(key, key) for key in pending]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("upload")
        text = data.get("manifest", "")
        chosen = [bool(data.get("pending")), bool(text and text.strip()), upload is not None]
        if sum(chosen) == 0:
            raise forms.ValidationError("Paste a manifest, upload one, or pick a pending pod.")
        if sum(chosen) > 1:
            raise forms.ValidationError("Give one pod: a pending pod, a manifest or a file.")
        if upload is not None:
            if upload.size > MAX_MANIFEST:
                self.add_error("upload", f"The file is larger than {MAX_MANIFEST // 1024} KiB.")
                return data
            try:
                text = upload.read().decode()
            except UnicodeDecodeError:
                self.add_error("upload", "The file is not UTF-8 text.")
                return data
        if text and text.strip():
            try:
                data["pod"] = parse_manifest(text)
            except forms.ValidationError as exc:
                self.add_error("upload" if upload is not None else "manifest", exc)
        return data
