"""Plain-text tables for people: ranked nodes, the winner, and every filtered node's reasons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.decision import Decision
from scoring.errors import FieldError


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )
    return lines


def decision_table(decision: Decision) -> str:
    """Header, ranked feasible nodes with weighted scores per plugin, then filtered nodes."""
    names = decision.cycle.snapshot.node_names
    selected = decision.selected_node
    lines = [
        f"pod:       {decision.cycle.pod.key}",
        f"profile:   {decision.profile}",
        f"selected:  {selected or '<none>'}",
        f"feasible:  {len(decision.feasible)}/{len(names)} nodes",
    ]
    if decision.summary():
        lines.append(f"message:   {decision.summary()}")
    plugins = [s.plugin for s in decision.scores]
    position = {int(n): k for k, n in enumerate(decision.feasible)}
    rows = []
    for rank, node in enumerate(decision.ranking, start=1):
        k = position[node]
        marker = "*" if names[node] == selected else " "
        cells = [f"{s.weighted[k]} ({s.raw[k]})" for s in decision.scores]
        rows.append([f"{marker}{rank}", names[node], str(decision.totals[k]), *cells])
    if rows:
        lines += ["", "Ranked nodes (weighted score, raw in brackets):"]
        lines += _table(["#", "node", "total", *plugins], rows)
    filtered = [i for i in decision.node_order() if i not in position]
    if filtered:
        lines += ["", "Filtered nodes:"]
        failed_rows = []
        for node in filtered:
            for outcome in decision.filters:
                status = outcome.result.status(node)
                if not status.ok:
                    failed_rows.append(
                        [names[node], outcome.plugin, status.code.label, status.message or ""]
                    )
        lines += _table(["node", "plugin", "code", "reason"], failed_rows)
    if decision.skipped:
        lines += ["", "Skipped plugins (not modelled):"]
        lines += _table(
            ["plugin", "extension points", "weight", "reason"],
            [
                [
                    s.plugin,
                    ", ".join(s.extension_points),
                    "" if s.weight is None else str(s.weight),
                    s.reason,
                ]
                for s in decision.skipped
            ],
        )
    if decision.ranking_may_differ:
        because = ", ".join(decision.unmodeled_scorers)
        lines += ["", f"The ranking may differ in the real scheduler: {because} also score nodes."]
    return "\n".join(lines) + "\n"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def validation_table(
    source: str,
    errors: Sequence[FieldError],
    warnings: Sequence[FieldError] = (),
    target: str | None = None,
) -> str:
    """Errors, then warnings, each as a table; the header names the target when given."""
    against = f" for {target}" if target else ""
    if not errors:
        status = "valid" if not warnings else f"valid, {_plural(len(warnings), 'warning')}"
    else:
        status = f"invalid ({_plural(len(errors), 'error')})"
    lines = [f"{source}: {status}{against}"]
    headers = ["field", "type", "detail"]
    if errors:
        lines += _table(headers, [[e.field, e.type, e.detail] for e in errors])
    if warnings:
        lines += ["warnings:", *_table(headers, [[w.field, w.type, w.detail] for w in warnings])]
    return "\n".join(lines) + "\n"


_LISTED = 20  # unschedulable pods and differences listed per table; the rest are counted


def simulation_table(report: Mapping[str, Any]) -> str:
    """Runs side by side (placement counts, utilization per resource), then each run's
    unschedulable pods and, when comparing, the pods placed differently."""
    runs = report["runs"]
    header = ["", *(run["config"] for run in runs)]
    rows = [
        ["pods placed", *(str(run["placed"]) for run in runs)],
        ["unschedulable", *(str(run["unschedulable"]) for run in runs)],
    ]
    for name in runs[0]["utilization"] if runs else ():
        entries = [run["utilization"][name] for run in runs]
        rows.append([f"{name} mean / stddev / max", *(_spread(e) for e in entries)])
        if any(e["overThreshold"] is not None for e in entries):
            rows.append(
                [f"{name} nodes over threshold", *(_count(e["overThreshold"]) for e in entries)]
            )
        rows.append(
            [f"{name} limits > allocatable", *(str(e["limitOversubscribed"]) for e in entries)]
        )
    lines = ["Simulation (requested / allocatable per node)", *_table(header, rows)]
    for run in runs:
        failed = [p for p in run["pods"] if p["selectedNode"] is None]
        if failed:
            lines += ["", f"Unschedulable pods under {run['config']}:"]
            lines += _table(
                ["pod", "reason"], [[p["pod"], p["reason"] or ""] for p in failed[:_LISTED]]
            )
            lines += _more(len(failed))
    moved = report.get("differences")
    if moved:
        lines += ["", f"Pods placed differently ({len(moved)}):"]
        cells = [[d["pod"], *(n or "<unschedulable>" for n in d["nodes"])] for d in moved[:_LISTED]]
        lines += _table(["pod", *header[1:]], cells)
        lines += _more(len(moved))
    return "\n".join(lines) + "\n"


def _spread(entry: Mapping[str, Any]) -> str:
    return " / ".join(f"{100 * entry[key]:.1f}%" for key in ("mean", "stddev", "max"))


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _more(total: int) -> list[str]:
    return [f"... and {total - _LISTED} more"] if total > _LISTED else []
