"""The dashboard's panel on LowNodeLoad and the coherence of the load-aware stack: counts,
the nodes a round would evict from, and each finding with its values and where they come from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SHOWN_NODES = 8


@dataclass
class FindingRow:
    rule: str
    severity: str
    summary: str
    values: list[str]
    nodes: int
    fix_label: str
    fix_url: str | None


@dataclass
class Panel:
    stored: bool
    enabled: bool
    valid: bool
    configmap: str
    counts: list[tuple[str, int]] = field(default_factory=list)
    over: list[str] = field(default_factory=list)
    more_over: int = 0
    pools: list[tuple[str, str]] = field(default_factory=list)
    evictions: int = 0
    findings: list[FindingRow] = field(default_factory=list)
    error: str = ""


def _value(value: Mapping[str, Any]) -> str:
    shown = "unset" if value["value"] is None else value["value"]
    if isinstance(shown, float) and shown.is_integer():
        shown = int(shown)
    return f"{value['component']}: {value['field']} = {shown} ({value['source']})"


def panel(report: Mapping[str, Any], fix_url: Callable[[str], tuple[str, str | None]]) -> Panel:
    """From ``decisions.descheduling.lownodeload_report``; ``fix_url`` maps a finding's
    ``fix`` to (label, url) of the place that resolves it."""
    conf = report["configuration"]
    result = Panel(
        stored=conf["stored"],
        enabled=report["enabled"],
        valid=bool(conf.get("valid")),
        configmap=conf.get("configmap", ""),
    )
    states = Counter(node["state"] for node in report["nodes"])
    result.counts = [(s, states[s]) for s in ("over", "normal", "under", "skipped") if states[s]]
    over = report.get("over") or []
    result.over, result.more_over = over[:SHOWN_NODES], max(0, len(over) - SHOWN_NODES)
    result.pools = [(pool["name"], pool["outcome"]) for pool in report["pools"]]
    result.evictions = len(report["evictions"])
    for finding in report["findings"]:
        label, url = fix_url(finding["fix"])
        result.findings.append(
            FindingRow(
                finding["rule"],
                finding["severity"],
                finding["summary"],
                [_value(v) for v in finding["values"]],
                len(finding["nodes"]),
                label,
                url,
            )
        )
    return result
