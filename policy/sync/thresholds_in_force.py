"""Per node: which usage-threshold annotation governs it now, what schedboard would write, and
why a push would not (someone else's annotation).

The one answer the node page, the policy pages, the dashboard and the API give, and the one
the dry-run acts on: the action comes from the gateway's own rule
(:func:`~policy.clusters.gateway.apply.annotation_action`), applied to the annotation the
snapshot's node carries and to what schedboard owns (it wrote there before).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from policy.clusters.gateway import apply as gw
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.policies import rendering
from policy.policies.models import NodeThresholdPolicy
from policy.sync import planners
from policy.sync.models import ClusterSyncState


@dataclass(frozen=True)
class NodeThresholdInForce:
    """One node: ``current`` is the annotation it carries (None: the LoadAware args govern),
    ``desired`` what its policies give it, ``action`` what a push does (``keep``, ``write``,
    ``remove``, ``leave``)."""

    node: str
    current: str | None
    desired: str | None
    policy: NodeThresholdPolicy | None  # the policy giving ``desired``
    matching: tuple[str, ...]  # every enabled policy targeting the node, winner first
    owned: bool  # schedboard wrote ``current``
    action: str

    @property
    def foreign(self) -> bool:
        """The node carries an annotation schedboard did not write."""
        return self.current is not None and not self.owned

    @property
    def governed_by(self) -> str:
        """Who decides the node's thresholds now, in a few words."""
        if self.current is None:
            return "the LoadAware args (no annotation)"
        if self.owned:
            return "schedboard's annotation"
        return "an annotation set outside schedboard"

    @property
    def push_writes(self) -> bool:
        return self.action in (gw.WRITE, gw.REMOVE)

    @property
    def reason(self) -> str:
        """Why the node stands as it does, and what a push would change."""
        by = f" ({self.policy.name})" if self.policy else ""
        if self.action == gw.LEAVE and self.desired is not None:
            return (
                f"set outside schedboard, so a push leaves it alone: {self.desired}{by} "
                "does not apply"
            )
        if self.action == gw.LEAVE:
            return "set outside schedboard; no threshold policy gives this node a value now"
        if self.action == gw.WRITE:
            return f"a push would write {self.desired}{by}"
        if self.action == gw.REMOVE:
            return "written by schedboard, and no policy gives it a value now: a push removes it"
        if self.desired is None:
            return "no threshold policy gives this node a value now"
        if self.owned:
            return f"in force, as written by schedboard{by}"
        return f"in force; set outside schedboard with the same value schedboard would write{by}"

    def as_dict(self) -> dict[str, object]:
        return {
            "current": self.current,
            "owned": self.owned,
            "governed_by": self.governed_by,
            "push": self.action,
            "reason": self.reason,
        }


def owned_nodes(cluster: Cluster) -> frozenset[str]:
    """Nodes whose annotation schedboard wrote (or a push in flight claimed); reading only."""
    state = ClusterSyncState.objects.filter(cluster=cluster).first()
    return planners.owned(state).nodes if state is not None else frozenset()


def thresholds_in_force(
    cluster: Cluster, at: datetime | None = None, stored: ClusterSnapshot | None = None
) -> tuple[ClusterSnapshot, datetime, list[NodeThresholdInForce]]:
    """Every node of the newest snapshot (or ``stored``) with its annotation at ``at`` (now).
    Raises :class:`rendering.NoSnapshot` when there is no snapshot."""
    stored, local, rows = rendering.render_node_thresholds(cluster, at, stored)
    carried = rendering.carried_thresholds(stored)
    owned = owned_nodes(cluster)
    result = []
    for row in rows:
        current = carried.get(row.node)
        action, _ = gw.annotation_action(current, row.value, row.node in owned)
        result.append(
            NodeThresholdInForce(
                node=row.node,
                current=current,
                desired=row.value,
                policy=row.policy,
                matching=row.matching,
                owned=current is not None and row.node in owned,
                action=action,
            )
        )
    return stored, local, result


def node_in_force(
    cluster: Cluster, stored: ClusterSnapshot, name: str
) -> NodeThresholdInForce | None:
    """One node's answer (None: not a node of ``stored``)."""
    _, _, rows = thresholds_in_force(cluster, stored=stored)
    return next((row for row in rows if row.node == name), None)
