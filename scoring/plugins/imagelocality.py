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

from scoring.columnar.values import Floats, Ints, Lists, Records, Table, Values
from scoring.columnar.write import LIST_POSITIONS
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
        self._images: NodeImages | None = None
        self.sizes: dict[str, IntArray] = {}
        self.listed: list[tuple[tuple[str, int], ...]] = []
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
        # State stored before nodes' image lists were kept is rebuilt once.
        if not self._stale and "listed" in self.__dict__:
            return
        holders: dict[str, list[int]] = {}
        sizes: dict[str, list[int]] = {}
        self.listed = []  # each node's (name, size), in order
        for i, node in enumerate(snapshot.nodes):
            on_node = node_image_sizes(node.images)
            self.listed.append(tuple(on_node.items()))
            for name, size in on_node.items():
                holders.setdefault(name, []).append(i)
                sizes.setdefault(name, []).append(size)
        self.total = len(snapshot.nodes)
        self.nodes = {name: np.array(idx, dtype=np.int64) for name, idx in holders.items()}
        self.sizes = {name: np.array(values, dtype=np.int64) for name, values in sizes.items()}
        self._images = None
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

    def images(self) -> NodeImages:
        """Every node's ``status.images`` sizes, flat (built on first use)."""
        if self._images is None:
            self._images = NodeImages(self)
        return self._images

    def count(self, name: str) -> int:
        """``ImageStateSummary.NumNodes``: how many nodes report the name."""
        holders = self.nodes.get(name)
        return 0 if holders is None else len(holders)


class NodeImages:
    """Every node's images (``node_image_sizes``) as flat arrays, for explanations: node ``i``'s
    are entries ``starts[i] … starts[i] + lengths[i]``, in its own order."""

    def __init__(self, spread: ImageSpread) -> None:
        self.names = list(spread.nodes)
        index = {name: k for k, name in enumerate(self.names)}
        self.counts = np.array([len(spread.nodes[name]) for name in self.names], dtype=np.int64)
        self.spreads = self.counts / spread.total if spread.total else self.counts * 0.0
        self.lengths = np.array([len(names) for names in spread.listed], dtype=np.int64)
        self.starts = np.cumsum(self.lengths) - self.lengths
        self.flat_names = np.array(
            [index[name] for pairs in spread.listed for name, _ in pairs], dtype=np.int64
        )
        self.flat_sizes = np.array(
            [size for pairs in spread.listed for _, size in pairs], dtype=np.int64
        )


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

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """:meth:`explain` of each of ``nodes``, from the spread's arrays."""
        spread = image_spread(cycle.snapshot)
        count = len(nodes)
        containers: list[Values] = []
        total = np.zeros(count, dtype=np.int64)
        for container in (*cycle.pod.init_containers, *cycle.pod.containers):
            name = normalized_image_name(container.image)
            has = np.zeros(spread.total, dtype=bool)
            sizes = np.zeros(spread.total, dtype=np.int64)
            holders = spread.nodes.get(name)
            if holders is not None:
                has[holders] = True
                sizes[holders] = spread.sizes[name]
            present, size = has[nodes], sizes[nodes][has[nodes]]
            share = spread.count(name) / spread.total if spread.total else 0.0
            scaled = (size.astype(np.float64) * share).astype(np.int64)
            total[present] += scaled
            fields: dict[str, Values] = {
                "container": Table.constant(container.name, count),
                "image": Table.constant(name, count),
                "sizeBytes": Ints(size),
                "nodesWithImage": Table.constant(spread.count(name), len(size)),
                "spread": Table.constant(share, len(size)),
                "scaled": Ints(scaled),
            }
            shapes = [("container", "image"), tuple(fields)]
            containers.append(Records(count, shapes, present.astype(np.int64), fields))
        width = len(containers)
        columns: dict[str, Values] = {
            "totalNodes": Table.constant(spread.total, count),
            "containers": Lists(np.full(count, width, dtype=np.int64), containers),
            "sumBeforeScaling": Ints(total),
            "minThreshold": Table.constant(MIN_THRESHOLD, count),
            "maxThreshold": Table.constant(MAX_CONTAINER_THRESHOLD * width, count),
            "score": Ints(calculate_priority(total, width)),
            "nodeImages": _node_images(spread.images(), nodes),
        }
        return Records(count, [tuple(columns)], None, columns)

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


def _node_images(images: NodeImages, nodes: IntArray) -> Lists:
    """The ``nodeImages`` lists of ``nodes``: by position when short, else item by item."""
    lengths = images.lengths[nodes]
    starts = images.starts[nodes]

    def entries(at: IntArray) -> Records:
        names = images.flat_names[at]
        fields: dict[str, Values] = {
            "name": Table(names, images.names),
            "sizeBytes": Ints(images.flat_sizes[at]),
            "nodesWithImage": Ints(images.counts[names]),
            "spread": Floats(images.spreads[names]),
        }
        return Records(len(at), [tuple(fields)], None, fields)

    longest = int(lengths.max()) if len(lengths) else 0
    if 1 < longest <= LIST_POSITIONS and len(nodes) > 1:
        return Lists(lengths, [entries(starts[lengths > j] + j) for j in range(longest)])
    firsts = np.repeat(starts, lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return Lists(lengths, items=entries(firsts + offsets))
