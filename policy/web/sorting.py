"""Lists that sort by a column: the links in their headings, and the ordering they ask for.

A column is (heading, sort key, model field); ``?sort=key`` sorts ascending, ``?sort=-key``
descending, and the heading's link turns the current order round. Filters in the query string
are kept; the page number is not (a new order starts at its first page). Ties are broken by id,
so pages stay stable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.http import HttpRequest

Column = tuple[str, str, str]  # (heading, sort key, model field); empty key: not sortable


@dataclass(frozen=True)
class Heading:
    label: str
    href: str  # empty when the column does not sort
    order: str  # "ascending" / "descending" while the list is sorted by it (aria-sort)


def headings(request: HttpRequest, columns: Sequence[Column]) -> list[Heading]:
    current = request.GET.get("sort", "")
    query = request.GET.copy()
    query.pop("page", None)
    out = []
    for label, key, _ in columns:
        if not key:
            out.append(Heading(label, "", ""))
            continue
        query["sort"] = f"-{key}" if current == key else key
        order = {key: "ascending", f"-{key}": "descending"}.get(current, "")
        out.append(Heading(label, f"?{query.urlencode()}", order))
    return out


def ordering(request: HttpRequest, columns: Sequence[Column], default: Sequence[str]) -> list[str]:
    """The ``order_by`` fields ``?sort=`` asks for (``default`` when it names no column)."""
    current = request.GET.get("sort", "")
    key = current.lstrip("-")
    for _, column_key, field in columns:
        if column_key and column_key == key:
            return [f"-{field}" if current.startswith("-") else field, "-id"]
    return list(default)
