"""The "Add cluster" form: how to reach a cluster, checked before anything connects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings

from policy.clusters.gateway.discovery import SCHEDULER_CONFIGMAP_PLACES, ConfigMapKey
from policy.core.choices import CONNECTABLE_KINDS, ClusterKind
from policy.sync.connect import parse_configmap

PLACES = ", ".join(str(place) for place in SCHEDULER_CONFIGMAP_PLACES)


class AddClusterForm(forms.Form):
    name = forms.SlugField(max_length=63, help_text="Lowercase letters, digits and -.")
    kind = forms.ChoiceField(choices=CONNECTABLE_KINDS, label="Reach it with")
    kubeconfig_path = forms.CharField(
        max_length=1024,
        required=False,
        label="Kubeconfig file",
        help_text="A path on the schedboard server (kubeconfig only).",
    )
    context = forms.CharField(
        max_length=253, required=False, help_text="Kubeconfig context; empty: the current one."
    )
    scheduler_configmap = forms.CharField(
        max_length=600,
        required=False,
        label="Scheduler ConfigMap",
        help_text=f"NAMESPACE/NAME[:KEY]; empty: looked for in {PLACES}.",
    )

    def __init__(self, *args: Any, superuser: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.superuser = superuser

    def clean_scheduler_configmap(self) -> ConfigMapKey | None:
        text = self.cleaned_data["scheduler_configmap"].strip()
        if not text:
            return None
        try:
            return parse_configmap(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("kind") == ClusterKind.KUBECONFIG:
            path = (data.get("kubeconfig_path") or "").strip()
            if not path:
                self.add_error("kubeconfig_path", "Give the kubeconfig file's path.")
            elif not self.superuser and not _under(Path(path), settings.KUBECONFIG_DIR):
                self.add_error(
                    "kubeconfig_path",
                    f"Operators may use kubeconfig files under {settings.KUBECONFIG_DIR} "
                    "only (a superuser may name any).",
                )
        return data


def _under(path: Path, directory: Path) -> bool:
    """Whether ``path`` resolves inside ``directory`` (no ``..`` or link way out)."""
    try:
        return path.resolve().is_relative_to(Path(directory).resolve())
    except OSError:
        return False
