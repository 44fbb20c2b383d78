"""The policy editors: scheduler configurations, profiles, LoadAware args, node threshold and
collect policies.

Every page reads for viewers; editing needs the editor role. Writes go through the same
services as the API (:mod:`policy.policies.services`) with the version the form was read at:
a stale version shows the other person's change and keeps the user's input. "Preview" runs
the change in a transaction that is rolled back and shows what it would render, with a diff
against the current output; "Save" commits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import time
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from policy.accounts.changes import ChangeContext, history, history_of
from policy.accounts.roles import can_edit_policy, role_required
from policy.clusters.models import Cluster
from policy.core.choices import Role
from policy.core.params import parse_id
from policy.decisions import evaluation
from policy.decisions import impact as decision_impact
from policy.policies import rendering
from policy.policies import services as policies
from policy.policies.located import NON_FIELD, located_body
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.sync import status as sync_status
from policy.web.editors import Editor, editor_for
from policy.web.forms import policies as pf
from policy.web.forms import profile_yaml
from policy.web.pages import reported_resources, selected_cluster
from policy.web.presenters import policies as ui
from policy.web.presenters import profile_plugins
from policy.web.views import policy_merge as merging


def _object(editor: Editor, pk: int) -> Any:
    return get_object_or_404(editor.model, pk=pk)


def require_editor(request: HttpRequest) -> None:
    if not can_edit_policy(request.user):
        raise PermissionDenied("Editing policies needs the editor role.")


def detail_url(editor: Editor, obj: Any) -> str:
    return reverse("policy-detail", args=[editor.slug, obj.pk])


# -- errors from the services onto the form ------------------------------------------------------


def _put_errors(
    form: pf.PolicyForm,
    editor: Editor,
    exc: policies.PolicyInvalid,
    pk: Any,
    skip: Callable[[str, str], bool] | None = None,
) -> None:
    """Put the services' errors on the form's fields; a profile's plugin errors go on the
    extension point's box they are about (``skip(box, message)``: already said there)."""
    body = located_body(
        exc.errors,
        kind=editor.service.kind,
        object_id=exc.subject_id or pk,
        changed=set(form.fields),
    )
    fields: Any = form.fields
    boxed = _plugin_box_errors(form, editor, exc, pk)
    for key, items in body.items():
        if key == "errors":
            continue
        if key == "plugins" and isinstance(form, pf.SchedulerProfileForm):
            rest = list(items)
            for box, message in boxed:
                if message in rest:
                    rest.remove(message)
                if skip is None or not skip(box, message):
                    form.add_error(box, form.plugin_message(box, message))
            if rest:
                form.add_error(None, [f"plugins: {m}" for m in rest])
        elif key != NON_FIELD and key in fields:
            form.add_error(key, list(items))
        else:
            form.add_error(
                None, list(items) if key == NON_FIELD else [f"{key}: {m}" for m in items]
            )


def _plugin_box_errors(
    form: pf.PolicyForm, editor: Editor, exc: policies.PolicyInvalid, pk: Any
) -> list[tuple[str, str]]:
    """(box, message) of the profile's own errors under ``plugins.<point>``."""
    if not isinstance(form, pf.SchedulerProfileForm):
        return []
    object_id = exc.subject_id or pk
    out = []
    for error in exc.errors:
        own = error.kind == editor.service.kind and (
            object_id is None or error.object_id in (object_id, None)
        )
        box = profile_plugins.box_of_path(error.field) if own and error.field else None
        if box is not None and box in form.fields:
            out.append((box, error.detail))
    return out


class _Rollback(Exception):
    pass


@dataclass(frozen=True)
class Preview:
    before: ui.Rendered
    after: ui.Rendered
    diff: list[tuple[str, str]]
    nodes: list[str] | None = None
    active: bool | None = None
    annotation: str | None = None
    thresholds: ui.ThresholdPreview | None = None  # at the moment the form asked for
    impact: dict[str, Any] | None = None  # profiles and LoadAware args: what saving changes


def dry_run(
    editor: Editor, cluster: Cluster, call: Callable[[], Any], form: pf.PolicyForm | None = None
) -> Preview:
    """Run ``call`` (a service call), render, and roll everything back; a threshold policy's
    form says when to evaluate (now, at a time, while the window is open)."""
    at, when = None, "now"
    if isinstance(form, pf.NodeThresholdPolicyForm):
        wall_clock, when = form.preview_moment()
        at = rendering.today_at(cluster, wall_clock) if wall_clock is not None else None
    render = editor.render if at is None else (lambda c: ui.render_thresholds(c, at))
    before = render(cluster)
    configuration = evaluation.choose_configuration(cluster, None)
    found: dict[str, Any] = {}
    try:
        with transaction.atomic():
            obj = call()
            found["after"] = render(Cluster.objects.get(pk=cluster.pk))
            names = decision_impact.previewed(cluster, obj, form.values() if form else {})
            if names is not None:
                found["impact"] = (names, evaluation.choose_configuration(cluster, None))
            if isinstance(obj, NodeThresholdPolicy):
                found["annotation"] = rendering.annotation_value(obj)
                try:
                    found["thresholds"] = ui.threshold_preview(obj, at, when)
                    found["nodes"] = found["thresholds"].nodes
                    found["active"] = found["thresholds"].active
                except rendering.NoSnapshot:
                    found["nodes"] = []
            raise _Rollback
    except _Rollback:
        pass
    after: ui.Rendered = found["after"]
    diff = ui.unified_diff(before.text, after.text, old="current", new="after this change")
    impact = None
    if "impact" in found:
        (profile, profile_after), changed = found["impact"]
        try:
            impact = decision_impact.compare(
                cluster, configuration, changed, profile, profile_after
            )
        except decision_impact.NoSnapshot:
            impact = None
    if isinstance(form, pf.NodeThresholdPolicyForm) and when == "now":
        try:  # once saved and pushed (the call is made again, and rolled back again)
            impact = decision_impact.threshold_policy_impact(cluster, call)
        except decision_impact.NoSnapshot:
            impact = None
    return Preview(
        before,
        after,
        ui.diff_lines(diff),
        found.get("nodes"),
        found.get("active"),
        found.get("annotation"),
        found.get("thresholds"),
        impact,
    )


def conflict_notice(obj: Any) -> dict[str, Any]:
    """The change that made the user's version stale."""
    change = history(obj).first()
    return {
        "change": change,
        "entry": ui.history_entry(change, obj.version) if change is not None else None,
        "version": obj.version,
    }


# -- pages ----------------------------------------------------------------------------------------


@role_required(Role.VIEWER)
def policy_index(request: HttpRequest) -> HttpResponse:
    """A cluster's policies: its scheduler configuration, threshold and collect policies."""
    clusters = list(Cluster.objects.all())
    cluster = selected_cluster(request, clusters)
    context: dict[str, Any] = {
        "clusters": clusters,
        "cluster": cluster,
        "can_edit": can_edit_policy(request.user),
    }
    if cluster is not None:
        configuration = SchedulerConfiguration.objects.filter(cluster=cluster).first()
        profiles = (
            list(configuration.profiles.select_related("loadaware_args").order_by("position", "id"))
            if configuration
            else []
        )
        rows = []
        for profile in profiles:
            try:
                args = profile.loadaware_args
            except LoadAwareSchedulingArgs.DoesNotExist:
                args = None
            rows.append((profile, args))
        thresholds = list(cluster.threshold_policies.order_by("-priority", "id"))
        collect = list(cluster.collect_policies.order_by("-is_default", "-priority", "id"))
        for selecting in (thresholds, collect):
            for policy in selecting:  # the targets as a Kubernetes label-selector string
                policy.selector_text = ui.value_text(policy.node_selector, "node_selector")  # type: ignore[union-attr]
        jobs = sync_status.for_cluster(cluster)
        jobs.annotate([configuration, *profiles, *(a for _, a in rows), *thresholds, *collect])
        context.update(
            configuration=configuration,
            profiles=rows,
            thresholds=thresholds,
            collect=collect,
            sync=jobs.overall,
        )
    return render(request, "policy/policies/index.html", context)


@role_required(Role.VIEWER)
def policy_detail(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    editor = editor_for(kind)
    obj = _object_or_history(editor, pk)
    if isinstance(obj, HttpResponse):
        return obj
    cluster = editor.cluster_of(obj)
    form = editor.form(instance=obj)
    form.for_cluster(cluster, new=False)
    rows = []
    defaults = getattr(form, "defaults", {})
    for legend, bound in form.grouped(editing=False):
        rows.append(
            (
                legend,
                [
                    (
                        b.label,
                        ui.shown(getattr(obj, b.name, None), b.name),
                        defaults.get(b.name, ""),
                    )
                    for b in bound
                ],
            )
        )
    context: dict[str, Any] = {
        "editor": editor,
        "obj": obj,
        "title": editor.label(obj),
        "obj_label": editor.short_label(obj),
        "cluster": cluster,
        "rows": rows,
        "rendered": editor.render(cluster),
        "can_edit": can_edit_policy(request.user),
        "show_defaults": bool(defaults),
        "sync_status": sync_status.status_of(obj, cluster),
    }
    if isinstance(obj, SchedulerProfile):
        context["plugins"] = [
            (
                point,
                *(
                    ((obj.plugins or {}).get(point) or {}).get(w) or []
                    for w in ("enabled", "disabled")
                ),
            )
            for point in pf.SchedulerProfileForm.POINTS
            if (obj.plugins or {}).get(point)
        ]
        try:
            context["args"] = obj.loadaware_args
        except LoadAwareSchedulingArgs.DoesNotExist:
            context["args"] = None
        context["plugin_help"] = profile_plugins.plugin_help(obj.configuration, obj.pk, None)
    if isinstance(obj, SchedulerConfiguration):
        context["profiles"] = list(obj.profiles.order_by("position", "id"))
    if isinstance(obj, NodeThresholdPolicy):
        context["annotation"] = rendering.annotation_value(obj)
        # ?when=at&at=02:30 or ?when=window: which nodes get which annotation then.
        mode, wall = request.GET.get("when"), _wall_clock(request.GET.get("at"))
        wall_clock, when = pf.threshold_moment(mode, wall, obj.active_from, obj.active_until)
        at = rendering.today_at(cluster, wall_clock) if wall_clock is not None else None
        context.update(when=when, when_mode=mode or "now", when_at=wall)
        try:
            preview = ui.threshold_preview(obj, at, when)
            context["thresholds"] = preview
            context["hits"] = preview.nodes
            context["active"] = preview.active
            context["local"] = preview.local
            context["clock"] = preview.clock
            context["no_match"] = preview.no_match
        except rendering.NoSnapshot as exc:
            context["hits_problem"] = str(exc)
    return render(request, "policy/policies/detail.html", context)


def _wall_clock(text: str | None) -> time | None:
    try:
        return time.fromisoformat(text) if text else None
    except ValueError:
        return None


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def policy_create(request: HttpRequest, kind: str) -> HttpResponse:
    require_editor(request)
    editor = editor_for(kind)
    parent_id = parse_id(request.POST.get("parent") or request.GET.get("parent"))
    if parent_id is None:
        raise Http404(f"Give the {editor.parent_field} (?parent=<id>).")
    parent = get_object_or_404(editor.parent_model, pk=parent_id)
    return _edit(request, editor, None, parent)


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def policy_edit(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    require_editor(request)
    editor = editor_for(kind)
    obj = _object(editor, pk)
    return _edit(request, editor, obj, getattr(obj, editor.parent_field))


def _edit(request: HttpRequest, editor: Editor, obj: Any, parent: Any) -> HttpResponse:
    cluster = editor.cluster_of_parent(parent)
    context: dict[str, Any] = {
        "editor": editor,
        "obj": obj,
        "parent": parent,
        "obj_label": editor.short_label(obj) if obj is not None else "",
        "cluster": cluster,
        "title": f"Edit {editor.phrase(obj)}" if obj else editor.new_title(parent),
        "help": ui.proposal_help() if editor.slug == "loadaware" else {},
        "sync_status": sync_status.status_of(obj, cluster) if obj is not None else None,
    }
    status = 200
    # For resource maps: the rows' picker offers these, and others are warned about.
    resources = reported_resources(cluster) if editor.form.has_resource_maps() else None
    context["base_version"] = obj.version if obj is not None else None
    plugin_help: profile_plugins.PluginHelp | None = None
    post: QueryDict = request.POST
    if editor.slug == "profiles":
        if request.method == "POST" and profile_yaml.FIELD in post:
            try:
                post = _read_yaml(post)
            except forms.ValidationError as exc:
                return _yaml_page(request, context, obj, post, exc.messages)
            context["read_yaml"] = True
        elif request.method == "GET" and request.GET.get("mode") == "yaml":
            return _yaml_page(request, context, obj, None, [])
    if request.method == "POST":
        form = editor.form(post, resources=resources)
        if obj is not None and form.is_valid() and form.cleaned_data.get("version") is None:
            form.add_error(None, VERSION_MISSING)  # without it, another's change is not seen
        base = merging.base_version(post) if obj is not None else None
        if obj is not None and base is not None:
            context["base_version"] = base
            if base != obj.version:
                # Someone saved since this editor was opened: never save over it unseen.
                context["conflict"] = conflict_notice(obj)
                if form.is_valid():
                    form = _merged(context, editor, obj, base, post, form, resources)
                    if not context["merge"].ready:
                        status = 409
        if status != 409 and form.is_valid():
            values = form.values()
            expected = form.cleaned_data.get("version")
            plugin_help = _plugin_help(editor, obj, parent, values)
            ctx = ChangeContext.from_request(request, ui=True)

            def call() -> Any:
                if obj is None:
                    return editor.service.create({editor.parent_field: parent, **values}, ctx)
                return editor.service.update(obj.pk, values, ctx, expected_version=expected)

            try:
                if "preview" in post:
                    context["preview"] = dry_run(editor, cluster, call, form)
                    context["warnings"] = form.warning_messages()
                else:
                    saved = call()
                    messages.success(
                        request,
                        f"Saved {editor.phrase(saved)} as version {saved.version}.",
                    )
                    for warning in form.warning_messages():
                        messages.warning(request, warning)
                    return redirect(detail_url(editor, saved))
            except policies.PolicyInvalid as exc:
                skip = _registry_problems(form, plugin_help)
                _put_errors(form, editor, exc, obj.pk if obj else None, skip)
                status = 400
            except policies.PreconditionFailed:
                current = editor.model._default_manager.get(pk=obj.pk)
                context["conflict"] = conflict_notice(current)
                form = _merged(context, editor, current, base or obj.version, post, form, resources)
                status = 409
            except ObjectDoesNotExist:
                context["gone"] = True
                status = 409
        elif status != 409:
            status = 400
    else:
        form = editor.form(instance=obj, resources=resources)
    form.for_cluster(cluster, new=obj is None)
    context["form"] = form
    context["errors"] = _error_summary(form)
    defaults: dict[str, str] = getattr(form, "defaults", {})
    proposal = context["help"]
    context["fieldsets"] = [
        (
            legend,
            [(b, defaults.get(b.name) if defaults else None, proposal.get(b.name)) for b in bound],
        )
        for legend, bound in form.grouped()
    ]
    if isinstance(form, pf.SchedulerProfileForm):
        if plugin_help is None:
            typed = form.values() if form.is_bound and hasattr(form, "cleaned_data") else None
            plugin_help = _plugin_help(editor, obj, parent, typed)
        context["plugin_help"] = plugin_help
        context["plugin_rows"] = _plugin_rows(form, plugin_help)
    return render(request, "policy/policies/edit.html", context, status=status)


def _read_yaml(post: QueryDict) -> QueryDict:
    """The form mode's POST for the profile typed in the YAML mode (the version, position and
    button as posted)."""
    read = post.copy()
    for name, value in profile_yaml.form_fields(post.get(profile_yaml.FIELD, "")).items():
        read[name] = value
    del read[profile_yaml.FIELD]
    return read


def _yaml_page(
    request: HttpRequest,
    context: dict[str, Any],
    obj: Any,
    post: QueryDict | None,
    problems: list[str],
) -> HttpResponse:
    """The profile editor in YAML mode: the stored profile, or the text posted with what is
    wrong with it (nothing is lost)."""
    context["yaml_mode"] = True
    context["yaml_problems"] = problems
    if post is None:
        context["yaml_text"] = profile_yaml.stored_yaml(obj)
        context["yaml_version"] = getattr(obj, "version", None)
        context["yaml_position"] = getattr(obj, "position", 0)
    else:
        context["yaml_text"] = post.get(profile_yaml.FIELD, "")
        context["yaml_version"] = post.get("version")
        context["yaml_position"] = post.get("position")
        context["base_version"] = post.get("base_version") or context["base_version"]
    return render(request, "policy/policies/edit.html", context, status=400 if problems else 200)


def _merged(
    context: dict[str, Any],
    editor: Editor,
    current: Any,
    base: int,
    post: Any,
    form: pf.PolicyForm,
    resources: list[str] | None,
) -> pf.PolicyForm:
    """The form with the change that made ``base`` stale merged in (``context["merge"]``
    says what came from whom and which fields both changed)."""
    merge = merging.merge(editor.form, current, base, post, form)
    context["merge"] = merge
    merged = editor.form(merge.data, resources=resources)
    merged.is_valid()
    return merged


def _plugin_help(
    editor: Editor, obj: Any, parent: Any, values: dict[str, Any] | None
) -> profile_plugins.PluginHelp | None:
    """For the profile editor: the target's plugins, the typed names' checks, the effective
    plugins of the profile with ``values`` (None: as stored)."""
    if editor.slug != "profiles":
        return None
    configuration = obj.configuration if obj is not None else parent
    return profile_plugins.plugin_help(configuration, obj.pk if obj else None, values)


def _registry_problems(
    form: pf.PolicyForm, plugin_help: profile_plugins.PluginHelp | None
) -> Callable[[str, str], bool] | None:
    """Put the registry's findings on the boxes (they name the plugin and the target); the
    returned test says whether an engine message repeats one of them."""
    if plugin_help is None:
        return None
    for box, problems in plugin_help.problems.items():
        if isinstance(form, pf.SchedulerProfileForm):
            problems = [form.plugin_message(box, p, p.split(":", 1)[0]) for p in problems]
        form.add_error(box, problems)

    def said(box: str, message: str) -> bool:
        return any(
            f'"{problem.split(":", 1)[0]}"' in message
            for problem in plugin_help.problems.get(box, [])
        )

    return said


@dataclass(frozen=True)
class PluginRow:
    point: str
    enabled: Any
    disabled: Any
    registered: list[profile_plugins.Registered]
    enabled_notes: list[str]
    disabled_notes: list[str]


def _plugin_rows(
    form: pf.SchedulerProfileForm, plugin_help: profile_plugins.PluginHelp | None
) -> list[PluginRow]:
    rows = []
    for point, enabled, disabled in form.plugin_rows():
        notes = plugin_help.notes if plugin_help else {}
        rows.append(
            PluginRow(
                point,
                enabled,
                disabled,
                plugin_help.registered.get(point, []) if plugin_help else [],
                notes.get(enabled.name, []),
                notes.get(disabled.name, []),
            )
        )
    return rows


def _error_summary(form: pf.PolicyForm) -> list[tuple[str, str, str]]:
    """(field id or "", label, message) of every error, for the summary at the top."""
    if not form.is_bound:
        return []
    out = []
    fields: Any = form.fields
    for name, errors in form.errors.items():
        for message in errors:
            if name == NON_FIELD or name == "__all__" or name not in fields:
                out.append(("", "", str(message)))
            else:
                bound = form[name]
                out.append((bound.id_for_label, str(bound.label), str(message)))
    return out


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def policy_delete(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    require_editor(request)
    editor = editor_for(kind)
    obj = _object(editor, pk)
    cluster = editor.cluster_of(obj)
    context: dict[str, Any] = {
        "editor": editor,
        "obj": obj,
        "title": f"Delete {editor.phrase(obj)}",
        "obj_label": editor.short_label(obj),
        "cluster": cluster,
        "version": obj.version,
    }
    status = 200
    ctx = ChangeContext.from_request(request, ui=True)
    posted = parse_id(request.POST.get("version"))
    expected = posted or obj.version

    def call() -> Any:
        editor.service.delete(obj.pk, ctx, expected_version=expected)

    try:
        if request.method == "POST" and posted is None:
            context["problem"] = VERSION_MISSING
            status = 400
        elif request.method == "POST":
            label = editor.phrase(obj)
            call()
            messages.success(request, f"Deleted {label}.")
            return redirect(f"{reverse('policy-index')}?cluster={cluster.pk}")
        context["preview"] = dry_run(editor, cluster, call)
    except policies.PolicyInvalid as exc:
        context["problem"] = str(exc)
        status = 400
    except policies.PreconditionFailed:
        current = editor.model._default_manager.get(pk=obj.pk)
        context["conflict"] = conflict_notice(current)
        context["version"] = current.version
        status = 409
    return render(request, "policy/policies/delete.html", context, status=status)


VERSION_MISSING = (
    "The form does not say which version it was made from (its version field), so a change "
    "someone else made meanwhile could not be noticed: nothing was saved. Reload the page."
)


@role_required(Role.VIEWER)
def policy_history(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    editor = editor_for(kind)
    obj = editor.model._default_manager.filter(pk=pk).first()
    if obj is None:
        return _deleted_history(request, editor, pk)
    changes = list(history(obj).select_related("content_type")[:100])
    every_field = request.GET.get("fields") == "all"
    form = editor.form()
    labels = {name: str(form[name].label) for name in form.fields}
    return render(
        request,
        "policy/policies/history.html",
        {
            "editor": editor,
            "obj": obj,
            "title": f"History of {editor.phrase(obj)}",
            "obj_label": editor.short_label(obj),
            "cluster": editor.cluster_of(obj),
            "entries": [
                ui.history_entry(change, obj.version, labels, every_field=every_field)
                for change in changes
            ],
            "every_field": every_field,
            "can_edit": can_edit_policy(request.user),
        },
    )


def _deleted_history(request: HttpRequest, editor: Editor, pk: int) -> HttpResponse:
    """The recorded changes of an object deleted since (by hand or by an import): read-only,
    its last entry the deletion. A 404 only when nothing was ever recorded under ``pk``."""
    changes = list(history_of(editor.model, pk).select_related("content_type", "cluster")[:100])
    if not changes:
        raise Http404(f"No {editor.noun} {pk}, and no recorded change of one.")
    last = changes[0]
    form = editor.form()
    labels = {name: str(form[name].label) for name in form.fields}
    every_field = request.GET.get("fields") == "all"
    name = f"{editor.noun} {last.object_repr}"
    return render(
        request,
        "policy/policies/history.html",
        {
            "editor": editor,
            "obj": None,
            "deleted": last,
            "title": f"History of {name} (deleted)",
            "obj_label": f"{name[:1].upper()}{name[1:]} (deleted)",
            "cluster": last.cluster,
            "entries": [
                ui.history_entry(change, -1, labels, every_field=every_field) for change in changes
            ],
            "every_field": every_field,
            "can_edit": False,
        },
    )


def _object_or_history(editor: Editor, pk: int) -> Any:
    """The object, or a redirect to its history when it was deleted (a 404 if never known)."""
    obj = editor.model._default_manager.filter(pk=pk).first()
    if obj is None and history_of(editor.model, pk).exists():
        return redirect("policy-history", editor.slug, pk)
    if obj is None:
        raise Http404(f"No {editor.noun} {pk}.")
    return obj


@role_required(Role.VIEWER)
@require_POST
def policy_revert(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    require_editor(request)
    editor = editor_for(kind)
    obj = _object(editor, pk)
    target = parse_id(request.POST.get("target"))
    expected = parse_id(request.POST.get("version"))
    if target is None or expected is None:
        messages.error(request, "Pick a version to revert to.")
        return redirect("policy-history", kind, pk)
    try:
        reverted = editor.service.revert(
            obj.pk,
            int(target),
            ChangeContext.from_request(request, ui=True),
            expected_version=int(expected),
        )
    except policies.PreconditionFailed as exc:
        messages.error(
            request,
            f"Not reverted: someone changed it meanwhile (now version {exc.current_version}). "
            "Check the newest change below, then try again.",
        )
    except policies.PolicyInvalid as exc:
        messages.error(request, f"Not reverted: version {target} is not valid any more: {exc}")
    except policies.VersionNotFound as exc:
        messages.error(request, f"Not reverted: {exc}.")
    else:
        messages.success(
            request, f"Reverted to version {target}; saved as version {reverted.version}."
        )
    return redirect("policy-history", kind, pk)
