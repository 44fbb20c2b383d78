"""Plain-text tables for people: ranked nodes, the winner, and every filtered node's reasons."""

from __future__ import annotations

from collections.abc import Sequence

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
        lines += [f"  {s.plugin}: {s.reason}" for s in decision.skipped]
    return "\n".join(lines) + "\n"


def validation_table(source: str, errors: Sequence[FieldError]) -> str:
    if not errors:
        return f"{source}: valid\n"
    lines = [f"{source}: invalid ({len(errors)} error{'s' if len(errors) != 1 else ''})"]
    lines += _table(["field", "type", "detail"], [[e.field, e.type, e.detail] for e in errors])
    return "\n".join(lines) + "\n"
