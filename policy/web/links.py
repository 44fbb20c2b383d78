"""Where edit controls lead: the policy editors. Only named routes are used, and a route that
does not exist yields no control rather than a broken link."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

from policy.clusters.models import Cluster

# (label, route name) of the editor pages the dashboard and object pages link to.
EDIT_ROUTES = (("policies", "policy-index"),)


def edit_links(cluster: Cluster) -> list[tuple[str, str]]:
    """(label, url) of the policy editors that exist, for ``cluster`` (never another one)."""
    links = []
    for label, route in EDIT_ROUTES:
        try:
            links.append((label, f"{reverse(route)}?cluster={cluster.pk}"))
        except NoReverseMatch:
            continue
    return links
