"""Only ``policy/clusters/gateway/`` talks to Kubernetes: nothing else imports the client."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = ROOT / "policy" / "clusters" / "gateway"


def kubernetes_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(name == "kubernetes" or name.startswith("kubernetes.") for name in names):
            lines.append(node.lineno)
    return lines


def test_only_the_gateway_imports_the_kubernetes_client() -> None:
    offenders = []
    for package in ("policy", "config", "scoring"):
        for path in (ROOT / package).rglob("*.py"):
            if GATEWAY in path.parents:
                continue
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in kubernetes_imports(path)]
    assert offenders == []


def test_the_gateway_does_import_it() -> None:
    assert kubernetes_imports(GATEWAY / "connection.py")
