"""Where edit controls lead: the policy editors. Only named routes are used, and a route that
does not exist yields no control rather than a broken link."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

# (label, route name) of the editor pages the dashboard and object pages link to.
EDIT_ROUTES = (("policies", "policy-index"),)


def edit_links() -> list[tuple[str, str]]:
    """(label, url) of the policy editors that exist."""
    links = []
    for label, route in EDIT_ROUTES:
        try:
            links.append((label, reverse(route)))
        except NoReverseMatch:
            continue
    return links
