"""The LowNodeLoad args editor: thresholds per resource and node pool, an impact preview, and
a save that changes only the cells edited (the next push writes the document)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from policy.accounts.changes import ChangeContext
from policy.accounts.roles import can_edit_policy, role_required
from policy.core.choices import Role
from policy.decisions import descheduling
from policy.policies import descheduler
from policy.policies.models import DeschedulerConfiguration
from policy.web.forms import lownodeload as form


@role_required(Role.VIEWER)
def lownodeload_edit(request: HttpRequest, pk: int) -> HttpResponse:
    row = get_object_or_404(DeschedulerConfiguration.objects.select_related("cluster"), pk=pk)
    args = descheduler.lownodeload_args(row)
    context: dict[str, Any] = {
        "row": row,
        "cluster": row.cluster,
        "can_edit": can_edit_policy(request.user),
        "maps": form.MAPS,
        "errors": [],
        "preview": None,
    }
    if args is None:
        context["missing"] = True
        return render(request, "policy/descheduler_edit.html", context)
    shown = args
    if request.method == "POST":
        if not can_edit_policy(request.user):
            return HttpResponse("Editing needs the editor role.", status=403)
        patch, errors = form.patch_from_form(args, request.POST)
        settings, setting_errors = form.settings_patch(args, request.POST)
        patch = {**patch, **settings}  # threshold maps and nodePools; the settings' own keys
        errors += setting_errors
        context["errors"] = errors
        if not errors and patch:
            result = _submit(request, row, patch, context)
            if result is not None:
                return result
        shown = _with_posted(args, request.POST)
        context["settings"] = form.setting_rows(args, request.POST)
    else:
        context["settings"] = form.setting_rows(args)
    context["pools"] = form.rows(shown)
    return render(request, "policy/descheduler_edit.html", context)


def _submit(
    request: HttpRequest,
    row: DeschedulerConfiguration,
    patch: dict[str, Any],
    context: dict[str, Any],
) -> HttpResponse | None:
    try:
        if request.POST.get("action") == "preview":
            context["preview"] = descheduling.preview_edit(row.cluster, row, patch)
            return None
        version = int(request.POST.get("version") or 0)
        descheduler.edit_lownodeload_args(
            row.pk, patch, version, ChangeContext.from_request(request, ui=True)
        )
    except descheduler.StaleVersion as exc:
        context["errors"] = [
            f"The document changed since you opened it (now version {exc.current}): "
            "reload the page and make your edit again."
        ]
        return None
    except descheduler.EditInvalid as exc:
        context["errors"] = [f"{e.field}: {e.detail}" for e in exc.errors]
        return None
    except descheduling.NoSnapshot as exc:
        context["errors"] = [str(exc)]
        return None
    messages.success(request, "Saved. The next push writes it to the cluster.")
    return redirect(reverse("descheduler-lownodeload", args=[row.pk]))


def _with_posted(args: dict[str, Any] | Any, data: Any) -> dict[str, Any]:
    """The args with the submitted cells, so a refused form shows what was typed."""
    patch, _ = form.patch_from_form(args, {k: v for k, v in data.items() if _is_number(v)})
    shown = dict(args)
    for key, value in patch.items():
        if key == "nodePools":
            shown[key] = value
        else:
            merged = dict(shown.get(key) or {})
            for resource, amount in value.items():
                if amount is None:
                    merged.pop(resource, None)
                else:
                    merged[resource] = amount
            shown[key] = merged
    return shown


def _is_number(text: str) -> bool:
    try:
        return text.strip() == "" or float(text) == float(text)
    except ValueError:
        return False
