"""Evaluate a pod, and the decision history: list, one decision, one node of a decision."""

from __future__ import annotations

import copy
from typing import Any

import django_filters
import yaml
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from policy.accounts.roles import role_required
from policy.clusters.engine import engine_for
from policy.clusters.models import Cluster
from policy.core.choices import DecisionOutcome, DecisionSource, Role
from policy.core.params import parse_id
from policy.decisions import evaluation, fixes, services
from policy.decisions.filters import DecisionFilterSet
from policy.decisions.models import PlacementDecision
from policy.policies.models import SchedulerConfiguration
from policy.web import sorting
from policy.web.forms.evaluate import EvaluateForm
from policy.web.pages import SnapshotUnreadable, pending_for_form, selected_cluster
from policy.web.presenters.decision import TOP_RANKED, decision_view
from policy.web.presenters.decision_compare import compare as compare_decisions
from policy.web.presenters.explain import (
    IMAGE_LOCALITY,
    INTER_POD_AFFINITY,
    NODE_RESOURCES_FIT,
    TOPOLOGY_SPREAD,
    affinity_view,
    estimate_text,
    fit_view,
    imagelocality_view,
    loadaware_lines,
    metric_line,
    other_details,
    spread_view,
)
from policy.web.presenters.fixes import fix_rows
from policy.web.rate_limits import EvaluateThrottle, over_rate
from scoring import LOADAWARE, ConfigurationInvalid

DECISIONS_PER_PAGE = 50
NODES_PER_PAGE = 100


def _configurations(cluster: Cluster) -> list[tuple[int, str]]:
    """The cluster's scheduler configurations, newest first."""
    return [
        (c.pk, f"#{c.pk} v{c.version}")
        for c in SchedulerConfiguration.objects.filter(cluster=cluster).order_by("-id")
    ]


def _profiles(cluster: Cluster, configuration: int | None) -> list[str]:
    try:
        choice = evaluation.choose_configuration(cluster, configuration)
        return sorted(engine_for(choice.document).frameworks)
    except (evaluation.EvaluationError, ConfigurationInvalid):
        return []


def _pending(cluster: Cluster) -> tuple[list[str], dict[str, Any]]:
    """Keys of the pending pods of the newest snapshot (the first few hundred) and their
    manifests."""
    stored = cluster.latest_snapshot()
    if stored is None:
        return [], {}
    try:
        pods = pending_for_form(stored)
    except SnapshotUnreadable:
        return [], {}
    return [key for key, _ in pods], dict(pods)


@role_required(Role.VIEWER)
@require_http_methods(["GET", "POST"])
def evaluate(request: HttpRequest) -> HttpResponse:
    """Place a pod on a cluster's newest snapshot; the decision is recorded and shown."""
    clusters = list(Cluster.objects.all())
    data = request.POST if request.method == "POST" else request.GET
    wanted = data.get("cluster")
    cluster = (
        next((c for c in clusters if str(c.pk) == wanted), None)
        if wanted
        else selected_cluster(request, clusters)
    )
    configuration = data.get("configuration")
    config_id = parse_id(configuration)
    pending, manifests = _pending(cluster) if cluster else ([], {})
    form_kwargs: dict[str, Any] = {
        "configurations": _configurations(cluster) if cluster else [],
        "profiles": _profiles(cluster, config_id) if cluster else [],
        "pending": pending,
    }
    if request.method == "POST":
        if (refused := over_rate(request, EvaluateThrottle())) is not None:
            return refused
        form = EvaluateForm(request.POST, request.FILES, **form_kwargs)
        if form.is_valid():
            decision = _evaluate(request, form, manifests)
            if decision is not None:
                return redirect("decision-detail", pk=decision.pk)
    else:
        initial: dict[str, Any] = {"cluster": cluster.pk if cluster else None}
        if request.GET.get("pending") in manifests:
            initial["pending"] = request.GET["pending"]
        form = EvaluateForm(initial=initial, **form_kwargs)
    return render(
        request,
        "policy/evaluate.html",
        {"form": form, "cluster": cluster, "clusters": clusters, "pending_count": len(pending)},
    )


def _evaluate(
    request: HttpRequest, form: EvaluateForm, manifests: dict[str, Any]
) -> PlacementDecision | None:
    data = form.cleaned_data
    if data.get("pending"):
        manifest = copy.deepcopy(dict(manifests[data["pending"]]))
    else:
        manifest = copy.deepcopy(data["pod"])
    if data.get("profile"):
        spec = manifest.setdefault("spec", {})
        if isinstance(spec, dict):
            spec["schedulerName"] = data["profile"]
    try:
        return services.evaluate_pod(
            data["cluster"],
            manifest,
            configuration_id=data.get("configuration"),
            user=request.user,
            source=DecisionSource.UI,
        )
    except evaluation.EvaluationError as exc:
        field = {"pod": "manifest", "configuration": "configuration", "cluster": "cluster"}.get(
            exc.field
        )
        if field == "manifest" and data.get("pending"):
            field = "pending"
        messages = [str(exc)] + [
            f"{e.get('field', '')}: {e.get('detail', '')}".strip(": ") for e in exc.errors
        ]
        for message in messages:
            form.add_error(field, message)
        return None


# The list's columns: heading, sort key (DecisionListFilterSet's), model field.
COLUMNS = (
    ("Pod", "pod", "pod_name"),
    ("Outcome", "outcome", "outcome"),
    ("Node", "node", "selected_node"),
    ("Feasible", "feasible", "feasible_nodes"),
    ("Why not placed", "", ""),
    ("Profile", "profile", "profile"),
    ("Cluster", "cluster", "cluster__name"),
    ("Source", "source", "source"),
    ("When (UTC)", "created", "created"),
)


NOT_FILTERS = frozenset({"page", "sort"})


class DecisionListFilterSet(DecisionFilterSet):
    """The list page's filters: text matches any part, in any case (people type fragments;
    the API's exact filters are for scripts), and the list sorts by any column."""

    pod = django_filters.CharFilter(
        field_name="pod_name", lookup_expr="icontains", label="Pod name contains"
    )
    namespace = django_filters.CharFilter(
        field_name="pod_namespace", lookup_expr="icontains", label="Namespace contains"
    )
    node = django_filters.CharFilter(
        field_name="selected_node", lookup_expr="icontains", label="Selected node contains"
    )
    profile = django_filters.CharFilter(lookup_expr="icontains", label="Profile contains")
    sort = django_filters.OrderingFilter(
        fields=[(field, key) for _, key, field in COLUMNS if key],
        label="Sort by",
        empty_label="Newest first",
    )


@role_required(Role.VIEWER)
@require_GET
def decision_list(request: HttpRequest) -> HttpResponse:
    """Decision history, newest first, filtered by the API's own FilterSet."""
    queryset: QuerySet[PlacementDecision] = PlacementDecision.objects.select_related(
        "cluster", "requested_by"
    ).defer("explanation_data", "pod")
    filterset = DecisionListFilterSet(request.GET or None, queryset=queryset)
    fields: Any = filterset.form.fields
    for name, label in (("created_after", "From (UTC)"), ("created_before", "Until (UTC)")):
        fields[name].widget.input_type = "datetime-local"
        fields[name].label = label
    for name in ("cluster", "outcome", "source", "agreement"):
        fields[name].empty_label = "Any"
        fields[name].widget.choices = fields[name].choices
    valid = filterset.is_bound and filterset.is_valid()
    decisions = filterset.qs if valid else queryset
    if valid and filterset.form.cleaned_data.get("sort"):
        decisions = decisions.order_by(*decisions.query.order_by, "-id")  # stable pages
    else:
        decisions = decisions.order_by("-created", "-id")
    paginator = Paginator(decisions, DECISIONS_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    return render(
        request,
        "policy/decisions.html",
        {
            # The cluster filtered on is the one the menu's other links keep.
            "cluster": filterset.form.cleaned_data.get("cluster") if valid else None,
            "filter": filterset,
            "page_obj": page,
            # Only filters make a list "match": page and sort keep every decision.
            "filtered": any(v for k, v in request.GET.items() if k not in NOT_FILTERS),
            "headings": sorting.headings(request, COLUMNS),
            "invalid": filterset.is_bound and not filterset.is_valid(),
        },
    )


@role_required(Role.VIEWER)
@require_GET
def decision_compare(request: HttpRequest) -> HttpResponse:
    """Two decisions side by side (``?a=&b=``; without ``b``, the previous decision of the same
    pod in the same cluster)."""
    first = _decision(request.GET.get("a"), "a")
    second_id = request.GET.get("b")
    if second_id:
        second = _decision(second_id, "b")
    else:
        earlier = (
            PlacementDecision.objects.select_related("cluster")
            .filter(
                cluster_id=first.cluster_id,
                pod_namespace=first.pod_namespace,
                pod_name=first.pod_name,
                id__lt=first.pk,
            )
            .order_by("-id")
            .first()
        )
        if earlier is None:
            raise Http404(f"Decision {first.pk} has no earlier decision of the same pod.")
        first, second = earlier, first  # older on the left
    views = [decision_view(first.explanation), decision_view(second.explanation)]
    return render(
        request,
        "policy/decision_compare.html",
        {
            "a": first,
            "b": second,
            "views": views,
            "sides": [(first, views[0], "a"), (second, views[1], "b")],
            "comparison": compare_decisions(*views),
        },
    )


def _decision(value: str | None, name: str) -> PlacementDecision:
    pk = parse_id(value)
    if pk is None:
        raise Http404(f"{name}: a decision id is needed")
    return get_object_or_404(PlacementDecision.objects.select_related("cluster"), pk=pk)


@role_required(Role.VIEWER)
@require_GET
def decision_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One decision: the winner, the ranking, and every filtered node grouped by reason."""
    decision = get_object_or_404(
        PlacementDecision.objects.select_related("cluster", "requested_by"), pk=pk
    )
    view = decision_view(decision.explanation, decision.pod)
    show_all = request.GET.get("ranked") == "all"
    ranked_page = None
    if show_all:
        ranked_page = Paginator(view.ranked, NODES_PER_PAGE).get_page(request.GET.get("rpage"))
        ranked = list(ranked_page.object_list)
    else:
        ranked = view.ranked[:TOP_RANKED]
    group_number = request.GET.get("group", "")
    open_group = next((g for g in view.groups if str(g.number) == group_number), None)
    group_page = (
        Paginator(open_group.nodes, NODES_PER_PAGE).get_page(request.GET.get("gpage"))
        if open_group
        else None
    )
    return render(
        request,
        "policy/decision.html",
        {
            "decision": decision,
            "earlier": PlacementDecision.objects.filter(
                cluster_id=decision.cluster_id,
                pod_namespace=decision.pod_namespace,
                pod_name=decision.pod_name,
                id__lt=decision.pk,
            ).exists(),
            "view": view,
            "ranked": ranked,
            "show_all": show_all,
            "ranked_page": ranked_page,
            "top": TOP_RANKED,
            "open_group": open_group,
            "group_page": group_page,
            "pod_yaml": yaml.safe_dump(decision.pod, sort_keys=False),
            "placing": _placing(decision),
        },
    )


def _placing(decision: PlacementDecision) -> dict[str, Any] | None:
    """The verified fixes for an unschedulable decision's pod, on the newest snapshot (None
    for a scheduled pod; ``error`` when they cannot be computed)."""
    if decision.outcome == DecisionOutcome.SCHEDULED:
        return None
    try:
        found = fixes.fixes_for(decision)
    except evaluation.EvaluationError as exc:
        return {"error": str(exc), "rows": []}
    return {"rows": fix_rows(found.fixes), "snapshot": found.snapshot_id, "error": None}


@role_required(Role.VIEWER)
@require_GET
def decision_node(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    """One node of one decision: every filter and score, and each plugin's explanation."""
    decision = get_object_or_404(PlacementDecision.objects.select_related("cluster"), pk=pk)
    stored = decision.stored_explanation()
    position = stored.position_of(name)
    if position is None:
        raise Http404(f"Decision {pk} did not evaluate a node named {name!r}.")
    [entry] = stored.nodes([position])
    details = entry.get("details") or {}
    la = details.get(LOADAWARE)
    # Ranked nodes come first, best first (the contract's order), as decision_view counts them.
    feasible = [bool(flag) for flag in stored.feasible()]
    rank = sum(feasible[:position]) + 1 if feasible[position] else None
    fit_raw = next(
        (s.get("raw") for s in entry.get("scores") or [] if s.get("plugin") == NODE_RESOURCES_FIT),
        None,
    )
    return render(
        request,
        "policy/decision_node.html",
        {
            "decision": decision,
            "entry": entry,
            "rank": rank,
            "feasible_count": sum(feasible),
            "la": la,
            "la_lines": loadaware_lines(la),
            "metric": metric_line((la or {}).get("nodeMetric")),
            "estimate": estimate_text((la or {}).get("incomingPod", {}).get("estimate")),
            "il": imagelocality_view(details.get(IMAGE_LOCALITY)),
            "fit": fit_view(details.get(NODE_RESOURCES_FIT), fit_raw),
            "spread": spread_view(details.get(TOPOLOGY_SPREAD)),
            "affinity": affinity_view(details.get(INTER_POD_AFFINITY)),
            "others": [
                (plugin, yaml.safe_dump(value, sort_keys=False, default_flow_style=False))
                for plugin, value in other_details(details)
            ],
        },
    )
