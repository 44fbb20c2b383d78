"""ImageLocality (in-tree score plugin): prefer nodes that already hold the pod's images.

Upstream: pkg/scheduler/framework/plugins/imagelocality/image_locality.go, with the node image
states of pkg/scheduler/backend/cache/snapshot.go (``getNodeImageStates``,
``createImageExistenceMap``). For each init and app container whose (normalized) image name the
node reports in ``status.images``, the node earns the image's size scaled by its spread, the
share of all nodes that report that name; the sum is clamped to [23 MiB, 1000 MiB × number of
containers] and scaled to [0, 100]. No NormalizeScore.

A node's size for a name is the size of its own ``status.images`` entry (the last one listing
the name, as ``getNodeImageStates`` overwrites). kube-scheduler's live cache instead keeps the
size first reported by any node for that name; the two differ only when nodes disagree on the
size of one image name.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from scoring.framework import MAX_NODE_SCORE, Cycle, Plugin
from scoring.goint import quo_array
from scoring.objects import Pod
from scoring.snapshot import NODE_EVENT, IntArray, Snapshot

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_EXTENSION = "imagelocality.spread"
MAX_MEMO = 256  # image-name tuples whose scores are kept (8 bytes per node each)


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: append ``:latest`` when the name has no tag after its last /."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_image_names(pod: Pod) -> list[str]:
    """The normalized image of every init container, then every app container (repeats kept:
    ``sumImageScores`` adds an image once per container that uses it)."""
    return [normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)]


class ImageSpread:
    """Per image name: the nodes reporting it and their spread-scaled score.

    ``scaledImageScore``: ``int64(float64(size) * float64(numNodes) / float64(totalNodes))``
    with the spread computed first, as Go does. Rebuilt after a Node change (images are in the
    Node's status); placements do not change it.
    """

    # Reads node images, not node labels or taints: Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot) -> None:
        self._stale = True
        self.nodes: dict[str, IntArray] = {}
        self.scaled: dict[str, IntArray] = {}
        self.total = 0
        # Scores on every node per tuple of pod image names (a pod's images decide its score
        # everywhere); cleared with the rest when a Node changes, oldest dropped past the bound.
        self._scores: OrderedDict[tuple[str, ...], IntArray] = OrderedDict()
        self.refresh(snapshot)

    def node_event(self, kind: str, node: int) -> None:
        if kind == NODE_EVENT:
            self._stale = True

    def refresh(self, snapshot: Snapshot) -> None:
        if not self._stale:
            return
        holders: dict[str, list[int]] = {}
        sizes: dict[str, list[int]] = {}
        for i, node in enumerate(snapshot.nodes):
            for name, size in node_image_sizes(node.images).items():
                holders.setdefault(name, []).append(i)
                sizes.setdefault(name, []).append(size)
        self.total = len(snapshot.nodes)
        self.nodes = {name: np.array(idx, dtype=np.int64) for name, idx in holders.items()}
        self.scaled = {}
        for name, idx in self.nodes.items():
            spread = float(len(idx)) / float(self.total)
            values = np.array(sizes[name], dtype=np.float64) * spread
            self.scaled[name] = values.astype(np.int64)
        self._scores.clear()
        self._stale = False

    def scores(self, names: tuple[str, ...]) -> IntArray | None:
        """``calculatePriority(sumImageScores)`` on every node for a pod with these images, or
        None when no node holds any of them (every node then scores 0)."""
        known = self._scores.get(names)
        if known is not None:
            self._scores.move_to_end(names)
            return known
        hits = [name for name in names if name in self.nodes]
        if not hits:
            return None
        every = np.zeros(self.total, dtype=np.int64)
        for name in hits:  # a name used by two containers counts twice, as in Go
            every[self.nodes[name]] += self.scaled[name]
        holders = np.flatnonzero(every)  # only these can score above 0
        result = np.zeros(self.total, dtype=np.int64)
        result[holders] = calculate_priority(every[holders], len(names))
        self._scores[names] = result
        if len(self._scores) > MAX_MEMO:
            self._scores.popitem(last=False)
        return result

    def count(self, name: str) -> int:
        """``ImageStateSummary.NumNodes``: how many nodes report the name."""
        holders = self.nodes.get(name)
        return 0 if holders is None else len(holders)


def node_image_sizes(images: Sequence[Any]) -> dict[str, int]:
    """Name → size over a node's ``status.images`` (a later entry listing a name wins)."""
    sizes: dict[str, int] = {}
    for image in images:
        for name in image.names:
            sizes[name] = image.size_bytes
    return sizes


def image_spread(snapshot: Snapshot) -> ImageSpread:
    spread = snapshot.extension(_EXTENSION, ImageSpread)
    spread.refresh(snapshot)
    return spread


def calculate_priority(sums: IntArray, containers: int) -> IntArray:
    """``calculatePriority``: clamp to [min, 1000 MiB × containers], scale to [0, 100] (int)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * containers
    clamped = np.where(
        sums < MIN_THRESHOLD, MIN_THRESHOLD, np.where(sums > max_threshold, max_threshold, sums)
    )
    return quo_array(MAX_NODE_SCORE * (clamped - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality(Plugin):
    """Score only. Never cached by the equivalence cache (``depends_on`` None): an image's spread
    counts every node, so a Node change on one node changes scores on others. ``ImageSpread``
    keeps its own per-image-set scores instead, dropped on any Node change."""

    name = "ImageLocality"
    points = frozenset({"score"})

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        every = image_spread(cycle.snapshot).scores(tuple(pod_image_names(cycle.pod)))
        if every is None:  # no node holds an image: calculatePriority(0, n) is 0 everywhere
            return np.zeros(len(feasible), dtype=np.int64)
        result: IntArray = every[feasible]
        return result

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any]:
        """The pod's images as this node holds them, the node's own images, and the arithmetic."""
        spread = image_spread(cycle.snapshot)
        on_node = node_image_sizes(cycle.snapshot.nodes[node].images)
        containers = []
        total = 0
        for container in (*cycle.pod.init_containers, *cycle.pod.containers):
            name = normalized_image_name(container.image)
            entry: dict[str, Any] = {"container": container.name, "image": name}
            if name in on_node:
                scaled = int(float(on_node[name]) * (spread.count(name) / spread.total))
                entry.update(
                    sizeBytes=on_node[name],
                    nodesWithImage=spread.count(name),
                    spread=spread.count(name) / spread.total,
                    scaled=scaled,
                )
                total += scaled
            containers.append(entry)
        count = len(containers)
        score = int(calculate_priority(np.array([total], dtype=np.int64), count)[0])
        return {
            "totalNodes": spread.total,
            "containers": containers,
            "sumBeforeScaling": total,
            "minThreshold": MIN_THRESHOLD,
            "maxThreshold": MAX_CONTAINER_THRESHOLD * count,
            "score": score,
            "nodeImages": [
                {
                    "name": name,
                    "sizeBytes": size,
                    "nodesWithImage": spread.count(name),
                    "spread": spread.count(name) / spread.total,
                }
                for name, size in on_node.items()
            ],
        }
