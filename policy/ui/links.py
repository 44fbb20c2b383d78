"""Where edit controls lead. The policy editors come later; until then the controls open the
REST API's browsable endpoints for the same objects. Only named routes are used, and a route
that does not exist (yet) yields no control rather than a broken link."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

# (label, route name): the UI editors will take these routes' place.
EDIT_ROUTES = (
    ("Scheduler configuration", "api:schedulerconfiguration-list"),
    ("LoadAware args", "api:loadawareschedulingargs-list"),
    ("Node threshold policies", "api:nodethresholdpolicy-list"),
)


def edit_links() -> list[tuple[str, str]]:
    """(label, url) of the policy editors that exist."""
    links = []
    for label, route in EDIT_ROUTES:
        try:
            links.append((label, reverse(route)))
        except NoReverseMatch:
            continue
    return links
