"""Pod (anti-)affinity terms as kube-scheduler reads them (Kubernetes 1.35).

Upstream: pkg/scheduler/framework/types.go (``newAffinityTerm``,
``getNamespacesFromPodAffinityTerm``, ``AffinityTerm.Matches``) and
pkg/scheduler/framework/plugins/interpodaffinity/plugin.go
(``mergeAffinityTermNamespacesIfNotEmpty``, ``GetNamespaceLabelsSnapshot``).

- A term's namespaces are its ``namespaces`` list, or the owning pod's namespace when both
  ``namespaces`` and ``namespaceSelector`` are unset.
- ``namespaceSelector``: null selects no namespace, ``{}`` every namespace.
- A term matches a pod when the pod's namespace is listed or its namespace's labels match the
  namespace selector, and the pod's labels match the label selector.
- The *incoming* pod's terms have their namespace selector resolved against the Namespace objects
  up front (merged into the namespace list); ``{}`` stays "every namespace".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.objects import Pod
from scoring.podselectors import NOTHING, CountKey, PodSelector, Scope, label_selector
from scoring.selectors import Requirement, aggregate_message, requirement_errors

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
AFFINITY = "podAffinity"
ANTI_AFFINITY = "podAntiAffinity"


@dataclass(frozen=True)
class AffinityTerm:
    """``framework.AffinityTerm``: parsed selectors and the namespaces they apply to."""

    namespaces: frozenset[str]
    namespace_selector: PodSelector
    selector: PodSelector
    topology_key: str

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
        """``AffinityTerm.Matches``; ``namespace_labels`` are those of the pod's namespace."""
        in_scope = pod.namespace in self.namespaces or self.namespace_selector.matches(
            namespace_labels or {}
        )
        return in_scope and self.selector.matches(pod.labels)

    def text(self) -> str:
        namespaces = ",".join(sorted(self.namespaces)) or "-"
        return (
            f"{self.topology_key}: {self.selector.text()} in namespaces {namespaces}"
            f" (namespaceSelector {self.namespace_selector.text()})"
        )


@dataclass(frozen=True)
class WeightedTerm:
    weight: int
    term: AffinityTerm


def parse_term(raw: Any, owner: Pod, path: str) -> AffinityTerm:
    """``newAffinityTerm``; raises ``SelectorError`` (an ``InputError``) on a bad selector."""
    term = raw if isinstance(raw, Mapping) else {}
    selector = label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    raw_ns_selector = term.get("namespaceSelector")
    ns_selector = label_selector(raw_ns_selector, f"{path}.namespaceSelector")
    listed = [str(n) for n in term.get("namespaces") or ()]
    if not listed and raw_ns_selector is None:
        listed = [owner.namespace]
    return AffinityTerm(
        frozenset(listed), ns_selector, selector, str(term.get("topologyKey") or "")
    )


def _section(pod: Pod, kind: str) -> Mapping[str, Any]:
    section = pod.affinity.get(kind)
    return section if isinstance(section, Mapping) else {}


def required_terms(pod: Pod, kind: str) -> list[AffinityTerm]:
    """The pod's required (anti-)affinity terms (``kind``: podAffinity / podAntiAffinity)."""
    path = f"spec.affinity.{kind}.{REQUIRED}"
    raw = _section(pod, kind).get(REQUIRED) or ()
    return [parse_term(t, pod, f"{path}[{i}]") for i, t in enumerate(raw)]


def preferred_terms(pod: Pod, kind: str) -> list[WeightedTerm]:
    """The pod's preferred (weighted) terms."""
    path = f"spec.affinity.{kind}.{PREFERRED}"
    out = []
    for i, item in enumerate(_section(pod, kind).get(PREFERRED) or ()):
        item = item if isinstance(item, Mapping) else {}
        weight = item.get("weight") or 0
        term = parse_term(item.get("podAffinityTerm"), pod, f"{path}[{i}].podAffinityTerm")
        out.append(WeightedTerm(int(weight), term))
    return out


def has_pod_affinity(pod: Pod) -> bool:
    """Whether the pod has any pod affinity or anti-affinity (``PodsWithAffinity``)."""
    return bool(_section(pod, AFFINITY) or _section(pod, ANTI_AFFINITY))


def merged_scope(term: AffinityTerm, namespaces: Mapping[str, Mapping[str, str]]) -> Scope:
    """The incoming pod's term with its namespace selector resolved to namespaces
    (``mergeAffinityTermNamespacesIfNotEmpty``); None means every namespace."""
    if term.namespace_selector.empty:
        return None
    if term.namespace_selector == NOTHING:
        return term.namespaces
    selected = {n for n, labels in namespaces.items() if term.namespace_selector.matches(labels)}
    return term.namespaces | frozenset(selected)


def count_key(terms: list[AffinityTerm], scopes: list[Scope]) -> CountKey:
    """One count key for pods matching *all* ``terms`` (their namespaces intersected, their
    label requirements ANDed), as ``podMatchesAllAffinityTerms`` asks."""
    scope: Scope = None
    requirements: tuple[Any, ...] | None = ()
    for term, term_scope in zip(terms, scopes, strict=True):
        if term_scope is not None:
            scope = term_scope if scope is None else scope & term_scope
        if term.selector.requirements is None or requirements is None:
            requirements = None
        else:
            requirements = (*requirements, *term.selector.requirements)
    return CountKey(scope, PodSelector(requirements), skip_terminating=False)


# -- upstream's parse errors ----------------------------------------------------------------

_TERM_LISTS = (
    ("requiredAffinityTerms", AFFINITY, REQUIRED),
    ("requiredAntiAffinityTerms", ANTI_AFFINITY, REQUIRED),
    ("preferredAffinityTerms", AFFINITY, PREFERRED),
    ("preferredAntiAffinityTerms", ANTI_AFFINITY, PREFERRED),
)
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _selector_error(raw: Any) -> str | None:
    """``metav1.LabelSelectorAsSelector``'s error text: the first bad requirement, with the
    paths ``labels.NewRequirement`` uses (``key``, ``values[i][key]``)."""
    if not isinstance(raw, Mapping):
        return None
    reqs = [
        (Requirement(str(k), "Equals", (str(v),)), [v])
        for k, v in (raw.get("matchLabels") or {}).items()
    ]
    for expr in raw.get("matchExpressions") or ():
        operator = expr.get("operator") if isinstance(expr, Mapping) else None
        if operator not in _OPERATORS:
            return f'"{operator}" is not a valid label selector operator'
        values = tuple(str(v) for v in expr.get("values") or ())
        reqs.append(
            (Requirement(str(expr.get("key") or ""), str(operator), values), expr.get("values"))
        )
    for req, raw_values in reqs:
        errors = requirement_errors(req, "", raw_values)
        if errors:
            return aggregate_message(errors)
    return None


def parse_error(pod: Pod) -> str | None:
    """``framework.NewPodInfo``'s error for the pod's (anti-)affinity terms, or None.

    Each of the four term lists reports its first term whose label selector (then namespace
    selector) does not parse; several lists' errors aggregate as ``[a, b]``.
    """
    found = []
    for name, kind, which in _TERM_LISTS:
        for item in _section(pod, kind).get(which) or ():
            term = item.get("podAffinityTerm") if which == PREFERRED else item
            term = term if isinstance(term, Mapping) else {}
            message = _selector_error(term.get("labelSelector")) or _selector_error(
                term.get("namespaceSelector")
            )
            if message:
                found.append(f"{name}: {message}")
                break
    if not found:
        return None
    return found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"
