"""Node selector parsing errors, as ``NodeAffinityArgs`` validation reports them.

``ValidateNodeAffinityArgs`` builds ``nodeaffinity.NewNodeSelector`` and
``nodeaffinity.NewPreferredSchedulingTerms`` (k8s.io/component-helpers) and returns their parse
errors, which come from ``labels.NewRequirement`` (k8s.io/apimachinery). The parsing is the one
the NodeAffinity plugin matches with (:mod:`scoring.selectors`); only the errors are kept here.
Preferred terms are indexed without a ``.preference`` child, as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring import field_errors as fe
from scoring import selectors
from scoring.errors import FieldError


def node_selector_errors(selector: Mapping[str, Any], path: str) -> list[FieldError]:
    """``nodeaffinity.NewNodeSelector`` errors; empty terms are skipped, as upstream."""
    terms = selectors.parse_node_selector_terms(
        selector.get("nodeSelectorTerms"), fe.child(path, "nodeSelectorTerms")
    )
    return selectors.term_errors(terms)


def preferred_terms_errors(terms: Sequence[Mapping[str, Any]], path: str) -> list[FieldError]:
    """``nodeaffinity.NewPreferredSchedulingTerms`` errors; zero-weight and empty terms skipped."""
    return selectors.parse_preferred_terms(list(terms), path)[1]
