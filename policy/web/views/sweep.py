"""The LoadAware threshold sweep page: the API's sweep drawn, with its recommendation."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from policy.accounts.roles import role_required
from policy.clusters.models import Cluster
from policy.core.choices import Role
from policy.web import sweep
from policy.web.pages import loadaware_source
from policy.web.presenters import charts

DEFAULTS = {"resource": "cpu", "from": 30, "to": 100, "step": 5, "pool_label": "pool"}


def _asked(request: HttpRequest, profile: str | None) -> dict[str, Any]:
    """The query as the API's body: numbers as numbers when they are, else as given (the
    sweep then says what is wrong)."""
    asked: dict[str, Any] = {"profile": request.GET.get("profile") or profile}
    for name, default in DEFAULTS.items():
        raw = request.GET.get(name)
        if raw is None or raw == "":
            asked[name] = default
        elif isinstance(default, int):
            asked[name] = int(raw) if raw.lstrip("-").isdigit() else raw
        else:
            asked[name] = raw
    if not asked["pool_label"]:
        del asked["pool_label"]
    return asked


@role_required(Role.VIEWER)
@require_GET
def loadaware_sweep(request: HttpRequest, pk: int) -> HttpResponse:
    """Filtered nodes and placeable pending pods per threshold, and a threshold per pool."""
    cluster = get_object_or_404(Cluster, pk=pk)
    source = loadaware_source(cluster)
    asked = _asked(request, source.profile or "default-scheduler")
    result, errors, chart = None, {}, None
    try:
        result = sweep.sweep(cluster, asked)
    except sweep.SweepInvalid as exc:
        errors = exc.errors
    if result is not None:
        rows = result["rows"]
        current = result["current"]
        chart = charts.compared_bars(
            [str(r["threshold"]) for r in rows],
            [
                ("nodes filtered", [r["filtered"] for r in rows]),
                ("pending pods placeable", [r["pending_placeable"] for r in rows]),
            ],
            label=f"{result['field']} of profile {result['profile']}: nodes the load filter "
            f"refuses and pending pods the profile can place, per threshold (in force: "
            f"{current['threshold']}%, {current['filtered']} nodes filtered)",
            counts=True,
        )
    return render(
        request,
        "policy/loadaware_sweep.html",
        {
            "cluster": cluster,
            "asked": asked,
            "profiles": source.profiles,
            "result": result,
            "errors": errors,
            "chart": chart,
        },
    )
