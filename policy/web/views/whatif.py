"""What-if pages: start a comparison, follow its progress, read the two sides' results."""

from __future__ import annotations

from typing import Any

import yaml
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from policy.accounts.roles import can_edit_policy, role_required
from policy.clusters.models import Cluster
from policy.core.choices import ConfigurationSource, Role, WorkloadSource
from policy.core.params import parse_id
from policy.decisions import whatif
from policy.decisions.models import WhatIfRun
from policy.policies import rendering
from policy.policies.services import PolicyInvalid
from policy.web import sorting
from policy.web.forms.whatif import SAMPLE_CONFIGURATION, SAMPLE_WORKLOAD, SIDES, WhatIfForm
from policy.web.pages import selected_cluster
from policy.web.presenters import whatif as present
from policy.web.rate_limits import WhatIfThrottle, over_rate

RUNS_PER_PAGE = 20
MOVED_PER_PAGE = 100
FIELDS = {"snapshot": "cluster"}
SIDE_LEGENDS = dict(SIDES)


def _stored_yaml(cluster: Cluster) -> str:
    stored = whatif.stored_configuration(cluster)
    if stored is None:
        return ""
    try:
        return rendering.render_scheduler_configuration(stored)
    except PolicyInvalid:
        return ""


def _initial(cluster: Cluster | None, previous: WhatIfRun | None) -> dict[str, Any]:
    """A useful first comparison: the stored configuration against kube-scheduler's
    defaults, with the stored YAML ready to edit; or the inputs of an earlier run."""
    if previous is not None:
        return {
            "cluster": previous.cluster_id,
            "workload_source": previous.workload_source,
            "workload": previous.workload,
            **{
                f"{side}_{key}": value
                for side in ("baseline", "candidate")
                for key, value in _side_initial(previous, side).items()
            },
        }
    stored_yaml = _stored_yaml(cluster) if cluster else ""
    return {
        "cluster": cluster.pk if cluster else None,
        "workload_source": WorkloadSource.MANIFESTS,
        "workload": SAMPLE_WORKLOAD,
        "baseline_source": ConfigurationSource.STORED
        if stored_yaml
        else ConfigurationSource.DEFAULTS,
        "baseline_yaml": stored_yaml or SAMPLE_CONFIGURATION,
        "candidate_source": ConfigurationSource.DEFAULTS
        if stored_yaml
        else ConfigurationSource.CUSTOM,
        "candidate_yaml": stored_yaml or SAMPLE_CONFIGURATION,
    }


def _side_initial(run: WhatIfRun, side: str) -> dict[str, Any]:
    """A side of an earlier run as it ran: a stored configuration comes back as its YAML
    (the stored one may have changed since)."""
    document = getattr(run, side)
    return {
        "source": ConfigurationSource.CUSTOM
        if getattr(run, f"{side}_source") == ConfigurationSource.STORED
        else getattr(run, f"{side}_source"),
        "label": getattr(run, f"{side}_label"),
        "thresholds": getattr(run, f"{side}_thresholds"),
        "yaml": "" if document is None else yaml.safe_dump(document, sort_keys=False),
    }


def _side_input(data: dict[str, Any], side: str) -> whatif.ConfigurationInput:
    return whatif.ConfigurationInput(
        data[f"{side}_source"],
        data.get(f"{side}_yaml") or "",
        data.get(f"{side}_label") or "",
        bool(data.get(f"{side}_thresholds")),
    )


def _start(request: HttpRequest, form: WhatIfForm) -> WhatIfRun | None:
    data = form.cleaned_data
    try:
        return whatif.start(
            data["cluster"],
            workload_source=data["workload_source"],
            workload=data.get("workload") or "",
            baseline=_side_input(data, "baseline"),
            candidate=_side_input(data, "candidate"),
            user=request.user,
            replay_from=data.get("replay_from"),
            replay_until=data.get("replay_until"),
        )
    except whatif.WhatIfInvalid as exc:
        for field, problems in exc.errors.items():
            target = _field_at_fault(data, field)
            for problem in problems:
                form.add_error(target if target in form.fields else None, problem)
        return None


def _field_at_fault(data: dict[str, Any], field: str) -> str:
    """The form field a service error belongs to: a side's YAML when it ran from YAML, else
    its source; the upload when the workload came from a file."""
    if field in SIDE_LEGENDS:
        custom = data.get(f"{field}_source") == ConfigurationSource.CUSTOM
        return f"{field}_yaml" if custom else f"{field}_source"
    if field == "workload" and data.get("upload") is not None:
        return "upload"
    return FIELDS.get(field, field)


def error_summary(form: WhatIfForm) -> list[tuple[str, str, str]]:
    """(field id or "", name, message) of every error, in the order of the page, for the
    summary at the top: each links to its field."""
    if not form.is_bound:
        return []
    out = []
    for name in [*form.fields, "__all__"]:
        for message in form.errors.get(name, []):
            if name == "__all__":
                out.append(("", "", str(message)))
                continue
            bound = form[name]
            side, _, _ = name.partition("_")
            label = str(bound.label)
            if side in SIDE_LEGENDS:
                label = f"{SIDE_LEGENDS[side]}: {label.split(' (', 1)[0]}"
            out.append((bound.id_for_label, label, str(message)))
    return out


def _apply_preset(form: WhatIfForm, side: str) -> tuple[WhatIfForm, dict[str, str] | None]:
    """The "Derive the YAML" button of ``side``: its preset applied to the cluster's current
    configuration, put in the side's YAML (source: YAML) to read and edit; nothing runs."""
    form.is_valid()  # the shapes: the cluster, the preset, its points
    data = form.cleaned_data
    cluster = data.get("cluster")
    if cluster is None or f"{side}_points" in form.errors:
        return form, None
    try:
        preset = whatif.preset_configuration(
            cluster, data.get(f"{side}_preset") or "", data.get(f"{side}_points")
        )
    except whatif.WhatIfInvalid as exc:
        fresh = WhatIfForm(form.data)  # only the preset's problem is shown
        fresh.is_valid()
        for field, problems in exc.errors.items():
            for problem in problems:
                fresh.add_error(f"{side}_{field}", problem)
        return fresh, None
    values = dict(form.data.items())
    values.update(
        {
            f"{side}_source": ConfigurationSource.CUSTOM,
            f"{side}_yaml": yaml.safe_dump(preset.document, sort_keys=False),
            f"{side}_label": preset.label,
        }
    )
    if data.get("upload") is not None and data.get("workload"):
        # An uploaded file's text stays (the file itself cannot).
        values["workload"] = data["workload"]
    derived = WhatIfForm(values)
    derived.is_valid()
    derived.fields[f"{side}_yaml"].widget.attrs["autofocus"] = True
    return derived, {
        "side": side,
        "text": f"{SIDE_LEGENDS[side]}: the YAML below is the cluster's {preset.base} with "
        f"{preset.description}. Read it, edit it if you like, then run the comparison.",
    }


RUN_COLUMNS = (
    ("#", "id", "id"),
    ("Status", "status", "status"),
    ("Cluster", "cluster", "cluster__name"),
    ("Pods", "pods", "pod_count"),
    ("Baseline (A)", "baseline", "baseline_label"),
    ("Candidate (B)", "candidate", "candidate_label"),
    ("Placed A / B", "", ""),
    ("Placed differently", "", ""),
    ("Started by", "who", "requested_by__username"),
    ("When (UTC)", "created", "created"),
)


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def whatif_list(request: HttpRequest) -> HttpResponse:
    """Earlier comparisons, and (editors) the form that starts one."""
    clusters = list(Cluster.objects.all())
    editor = can_edit_policy(request.user)
    if request.method == "POST":
        if not editor:
            raise PermissionDenied("Starting a comparison needs the editor role.")
        form = WhatIfForm(request.POST, request.FILES)
        side, preset_notice = request.POST.get("apply_preset", ""), None
        if side in SIDE_LEGENDS:
            form, preset_notice = _apply_preset(form, side)
        elif (refused := over_rate(request, WhatIfThrottle())) is not None:
            return refused
        elif form.is_valid() and (run := _start(request, form)) is not None:
            return redirect("whatif-detail", pk=run.pk)
        cluster = form.cleaned_data.get("cluster")
    else:
        preset_notice = None
        cluster = selected_cluster(request, clusters)
        previous_id = parse_id(request.GET.get("from"))
        previous = WhatIfRun.objects.filter(pk=previous_id).first() if previous_id else None
        form = WhatIfForm(initial=_initial(cluster, previous))
    runs = (
        WhatIfRun.objects.select_related("cluster", "requested_by")
        .defer("result", "workload", "baseline", "candidate")
        .order_by(*sorting.ordering(request, RUN_COLUMNS, ("-created", "-id")))
    )
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    latest = cluster.latest_snapshot() if cluster else None
    return render(
        request,
        "policy/whatif/list.html",
        {
            "form": form if editor else None,
            "errors": error_summary(form) if editor else [],
            "preset_notice": preset_notice,
            "clusters": clusters,
            "cluster": cluster,
            "page": page,
            "pending_count": latest.pending_pod_count if latest else 0,
            "headings": sorting.headings(request, RUN_COLUMNS),
        },
    )


@role_required(Role.VIEWER)
@require_http_methods(["GET"])
def whatif_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One comparison: progress while it runs (the status part refreshes itself), then the
    side-by-side report."""
    run = get_object_or_404(WhatIfRun.objects.select_related("cluster", "requested_by"), pk=pk)
    context: dict[str, Any] = {
        "run": run,
        "stalled": whatif.stalled(run),
        "can_edit": can_edit_policy(request.user),
    }
    if request.headers.get("X-Partial") == "status":
        return render(request, "policy/whatif/_status.html", context)
    context.update(
        {
            f"{side}_yaml": yaml.safe_dump(document, sort_keys=False) if document else ""
            for side, document in (("baseline", run.baseline), ("candidate", run.candidate))
        }
    )
    result = run.result if run.finished_ok else None
    if result:
        resources = result.get("resources", [])
        moved = Paginator(present.moved_pods(result), MOVED_PER_PAGE)
        context.update(
            result=result,
            sides=result["runs"],
            pending_notes=present.pending_notes(result["runs"]),
            metrics=present.metrics(result["runs"], resources),
            noise_points=present.NOISE_POINTS,
            outcome=present.outcome_chart(result, resources),
            spread=present.spread_chart(result),
            distributions=[
                {"resource": name, "chart": chart}
                for name in resources
                if (chart := present.distribution_chart(result, name)) is not None
            ],
            moved=moved.get_page(request.GET.get("page")),
        )
    return render(request, "policy/whatif/detail.html", context)


@role_required(Role.EDITOR)
@require_POST
def whatif_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(WhatIfRun, pk=pk)
    if whatif.cancel(run):
        messages.info(request, f"Comparison #{run.pk} was cancelled.")
    else:
        messages.warning(request, f"Comparison #{run.pk} had already finished.")
    return redirect("whatif-detail", pk=run.pk)
