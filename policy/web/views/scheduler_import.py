"""Import a whole KubeSchedulerConfiguration into a cluster's scheduler configuration.

The person pastes the document (or picks a file); "Preview" checks it with the engine for the
cluster's scheduler target and shows what it would create or replace (profiles, their plugins
and plugin args, the LoadAware args), what schedboard stores but does not model (kept as
written), and the diff of the rendered document; "Import and save" stores it. Both go through
:meth:`policy.policies.services.SchedulerConfigurationService.import_document`, as the API's
``import/`` does: there is one parser. Errors name the field path and its line in the text;
what was typed is always given back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from policy.accounts.changes import ChangeContext
from policy.accounts.roles import role_required
from policy.clusters.models import Cluster
from policy.core.choices import Role
from policy.core.params import parse_id
from policy.policies import documents
from policy.policies import services as policies
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.web.editors import EDITORS
from policy.web.views.policies import conflict_notice, detail_url, dry_run, require_editor
from scoring import CONFIG_API_VERSION, FieldError
from scoring import PLUGIN_CATALOG as CATALOG

MAX_DOCUMENT = 1024 * 1024
LOADAWARE = "LoadAwareScheduling"
_TYPE_META = {"apiVersion", "kind"}
UNNAMED = "default-scheduler (schedulerName not set)"


class ImportForm(forms.Form):
    document = forms.CharField(
        required=False,
        strip=False,
        max_length=MAX_DOCUMENT,
        label="KubeSchedulerConfiguration (YAML or JSON)",
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false", "class": "yaml"}),
        help_text="The whole document, as in the scheduler's --config file or ConfigMap: "
        "v1beta2, v1beta3 or v1 (v1beta1 where the cluster runs Kubernetes 1.19–1.22).",
    )
    upload = forms.FileField(
        required=False,
        label="Or read it from a file",
        help_text="Its text replaces what is in the box above.",
    )
    version = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)


@dataclass
class ProfilePlan:
    scheduler_name: str
    action: str  # "new" or "replaces"
    replaces_version: int | None
    plugins: list[tuple[str, str]]  # (extension point, "enabled A, B; disabled C")
    plugin_args: list[str]  # pluginConfig names (args kept as written)
    loadaware_args: bool


@dataclass
class RemovedProfile:
    """A profile the document does not name: importing deletes it, with its plugin args and
    LoadAware args (their history stays readable)."""

    pk: int
    scheduler_name: str
    version: int
    plugin_args: list[str]
    loadaware_args: int | None  # the LoadAware args' id, deleted with the profile

    @property
    def key(self) -> str:
        """What a confirmation checkbox posts for it."""
        return str(self.pk)


@dataclass
class ImportPlan:
    creates: bool
    api_version: str
    profiles: list[ProfilePlan]
    removed: list[RemovedProfile]
    kept: list[str] = field(default_factory=list)

    def unconfirmed(self, confirmed: list[str]) -> list[RemovedProfile]:
        """The deletions not ticked one by one (a tick for a profile no longer deleted does not
        count for another)."""
        return [p for p in self.removed if p.key not in set(confirmed)]


def _line_of(text: str, path: str) -> int | None:
    """The line of ``path`` (``profiles[0].plugins.filter.enabled[1]``) in the YAML or JSON
    text, as far down the path as the text goes."""
    try:
        node: Any = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        child = None
        if part.startswith("[") and isinstance(node, yaml.SequenceNode):
            index = int(part.strip("[]")) if part.strip("[]").isdigit() else -1
            child = node.value[index] if 0 <= index < len(node.value) else None
            if child is not None:
                line = child.start_mark.line + 1
        elif isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if pair is not None:
                child = pair[1]
                line = pair[0].start_mark.line + 1
        if child is None:
            break
        node = child
    return line


def _located(text: str, errors: list[FieldError]) -> list[tuple[str, str]]:
    """(where, message): "line 7, profiles[0].plugins.filter.enabled[0]"."""
    out = []
    for error in errors:
        where = ""
        if error.field:
            line = _line_of(text, error.field)
            where = f"line {line}, {error.field}" if line else error.field
        out.append((where, error.detail))
    return out


def _point_summary(plugins: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for point, sets in (plugins or {}).items():
        if not isinstance(sets, Mapping):
            continue
        parts = []
        for which in ("enabled", "disabled"):
            names = [
                str(e.get("name", "")) + (f" ×{e['weight']}" if e.get("weight") else "")
                for e in sets.get(which) or []
                if isinstance(e, Mapping)
            ]
            if names:
                parts.append(f"{which} {', '.join(names)}")
        if parts:
            rows.append((point, "; ".join(parts)))
    return rows


def _kept(source: Mapping[str, Any], tree: Mapping[str, Any]) -> list[str]:
    """What the document holds that schedboard does not model: kept as written."""
    kept = []
    api_version = str(source.get("apiVersion") or "")
    if api_version != CONFIG_API_VERSION:
        kept.append(f"apiVersion {api_version}: the document is written back in it.")
    modelled = _TYPE_META | {"profiles", *documents.CONFIGURATION_FIELDS.values()}
    for key in source:
        if key not in modelled:
            kept.append(f"{key}: kept as written (not editable here).")
    profile_fields = set(documents.PROFILE_FIELDS.values())
    for i, profile in enumerate(source.get("profiles") or []):
        if not isinstance(profile, Mapping):
            continue
        for key in profile:
            if key not in profile_fields:
                kept.append(f"profiles[{i}].{key}: kept as written (not editable here).")
    for profile in tree.get("profiles") or []:
        name = profile.get("scheduler_name") or "default-scheduler"
        for point, sets in (profile.get("plugins") or {}).items():
            for entry in (sets or {}).get("enabled") or []:
                plugin = str(entry.get("name", ""))
                if plugin and plugin != "*" and plugin not in CATALOG:
                    kept.append(
                        f"{name}: {plugin} at {point} is written as is; schedboard's "
                        "evaluations do not model it."
                    )
    return kept


def _plan(cluster: Cluster, text: str) -> ImportPlan:
    source = documents.parse_source(text)
    tree = documents.tree_from_document(source)
    existing = SchedulerConfiguration.objects.filter(cluster=cluster).first()
    current = list(existing.profiles.order_by("position", "id")) if existing else []
    by_name = {p.scheduler_name: p for p in current}
    profiles = []
    for entry in tree.get("profiles") or []:
        name = entry.get("scheduler_name") or ""
        old = by_name.get(name)
        profiles.append(
            ProfilePlan(
                scheduler_name=name or UNNAMED,
                action="replaces" if old is not None else "new",
                replaces_version=old.version if old is not None else None,
                plugins=_point_summary(entry.get("plugins") or {}),
                plugin_args=[str(c.get("name", "")) for c in entry.get("plugin_config") or []],
                loadaware_args=entry.get("loadaware_args") is not None,
            )
        )
    removed = [_removed(p) for p in policies.dropped_profiles(existing, tree)] if existing else []
    return ImportPlan(
        creates=existing is None,
        api_version=str(source.get("apiVersion") or ""),
        profiles=profiles,
        removed=removed,
        kept=_kept(source, tree),
    )


def _removed(profile: SchedulerProfile) -> RemovedProfile:
    args = LoadAwareSchedulingArgs.objects.filter(profile=profile).values_list("pk", flat=True)
    return RemovedProfile(
        pk=profile.pk,
        scheduler_name=profile.scheduler_name or UNNAMED,
        version=profile.version,
        plugin_args=[str(c.get("name", "")) for c in profile.plugin_config or []],
        loadaware_args=args.first(),
    )


def _read_upload(form: ImportForm) -> str | None:
    """The uploaded file's text, or None (no file); a form error when unreadable."""
    upload = form.cleaned_data.get("upload")
    if not upload:
        return None
    if upload.size > MAX_DOCUMENT:
        form.add_error("upload", f"The file is larger than {MAX_DOCUMENT // 1024} KiB.")
        return None
    try:
        return str(upload.read().decode("utf-8"))
    except UnicodeDecodeError:
        form.add_error("upload", "The file is not UTF-8 text.")
        return None


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def policy_import(request: HttpRequest) -> HttpResponse:
    require_editor(request)
    cluster_id = parse_id(request.POST.get("cluster") or request.GET.get("cluster"))
    if cluster_id is None:
        raise Http404("Give the cluster (?cluster=<id>).")
    cluster = get_object_or_404(Cluster, pk=cluster_id)
    existing = SchedulerConfiguration.objects.filter(cluster=cluster).first()
    editor = EDITORS["configurations"]
    context: dict[str, Any] = {
        "cluster": cluster,
        "configuration": existing,
        "title": f"Import a KubeSchedulerConfiguration into cluster {cluster.name}",
        "target": cluster.scheduler_target(),
        "editor": editor,
    }
    status = 200
    problems: list[tuple[str, str]] = []
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        text = ""
        if form.is_valid():
            uploaded = _read_upload(form)
            text = uploaded if uploaded is not None else form.cleaned_data["document"] or ""
            if uploaded is not None:  # the file's text goes into the box: nothing is lost
                data = request.POST.copy()
                data["document"] = uploaded
                form = ImportForm(data)
                form.is_valid()
        else:
            text = str(request.POST.get("document", ""))
        if form.errors:
            status = 400
        elif not text.strip():
            form.add_error("document", "Paste a KubeSchedulerConfiguration, or choose a file.")
            status = 400
        else:
            status, problems = _preview_or_save(request, form, cluster, existing, text, context)
            if status == 302:
                saved = SchedulerConfiguration.objects.get(cluster=cluster)
                return redirect(detail_url(editor, saved))
    else:
        form = ImportForm(initial={"version": existing.version if existing else None})
    context["form"] = form
    context["problems"] = problems
    context["error_count"] = len(problems) + sum(len(e) for e in form.errors.values())
    return render(request, "policy/policies/import.html", context, status=status)


def _preview_or_save(
    request: HttpRequest,
    form: ImportForm,
    cluster: Cluster,
    existing: SchedulerConfiguration | None,
    text: str,
    context: dict[str, Any],
) -> tuple[int, list[tuple[str, str]]]:
    """The response status (302: saved) and the problems found in the document."""
    service = policies.SchedulerConfigurationService()
    errors = documents.validate_import(text, cluster.scheduler_target())
    if errors:
        return 400, _located(text, errors)
    posted = form.cleaned_data.get("version")
    if existing is None:
        expected: int | None = policies.NOT_THERE_YET
    elif posted is None:
        form.add_error(None, "The form does not say which version it was made from: reload it.")
        return 400, []
    else:
        expected = posted
    ctx = ChangeContext.from_request(request, ui=True)

    def call() -> Any:
        configuration, _ = service.import_document(cluster, text, ctx, expected_version=expected)
        return configuration

    try:
        plan = _plan(cluster, text)
        unconfirmed = plan.unconfirmed(request.POST.getlist("delete"))
        if "save" not in request.POST or unconfirmed:
            context["plan"] = plan
            context["preview"] = dry_run(EDITORS["configurations"], cluster, call)
            context["confirmed"] = set(request.POST.getlist("delete"))
            if "save" not in request.POST:
                return 200, []
            names = ", ".join(p.scheduler_name for p in unconfirmed)
            form.add_error(
                None,
                f"This import deletes {len(plan.removed)} profile"
                f"{'s' if len(plan.removed) > 1 else ''}: tick each one to confirm deleting it "
                f"(not ticked: {names}). Nothing was saved.",
            )
            return 400, []
        configuration = call()
    except policies.PolicyInvalid as exc:
        return 400, _located(text, [FieldError(e.field, e.type, e.detail) for e in exc.errors])
    except policies.PreconditionFailed:
        current = SchedulerConfiguration.objects.filter(cluster=cluster).first()
        if current is not None:
            context["conflict"] = conflict_notice(current)
            context["configuration"] = current
            data = request.POST.copy()
            data["version"] = str(current.version)
            form.data = data
        else:
            form.add_error(None, "The configuration was deleted meanwhile: preview again.")
        return 409, []
    verb = "Imported" if existing is None else "Replaced"
    messages.success(
        request,
        f"{verb} the scheduler configuration of cluster {cluster.name} from the document; "
        f"saved as version {configuration.version}.",
    )
    return 302, []
