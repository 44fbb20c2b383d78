"""A synthetic Kubernetes cluster, as ``kubectl get -o json`` would print it.

Used for the demo cluster, tests and benchmarks: Nodes of mixed sizes and pools, bound and
pending Pods, Koordinator NodeMetrics (some expired, one missing) and NodeResourceTopology
objects for GPU/NUMA nodes. The output depends only on the arguments (``seed``, ``now``...),
and no node is overcommitted by requests, so an engine fed with it sees a cluster a real
scheduler could have produced.

Pure Python + numpy: nothing here imports Django. Random draws are made in bulk with numpy so
that 5,000 nodes / 50,000 pods take a few seconds; only object building loops in Python.
"""

from __future__ import annotations

import functools
import gc
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS

__all__ = ["generate_cluster"]

Obj = dict[str, Any]

KI = 1 << 10
MI = 1 << 20
GI = 1 << 30

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
TEAMS = ("payments", "search", "checkout", "ml-platform", "data-eng", "identity")
APPS = ("api", "worker", "frontend", "ingest", "cache", "scheduler", "reports", "gateway")
STATEFUL_APPS = ("postgres", "kafka", "redis", "zookeeper")
DAEMONSET = ("monitoring", "node-exporter")
PRIORITY_LABEL = "koordinator.sh/priority-class"
KUBELET_VERSION = "v1.30.4"
DAY = 86_400

# Expiry of Koordinator's LoadAwareScheduling (nodeMetricExpirationSeconds default): expired
# NodeMetrics are made older than this, fresh ones well inside it.
EXPIRED_AFTER_SECONDS = 180


@dataclass(frozen=True)
class _Shape:
    """An instance type: what the cloud sells, before kubelet reservations."""

    instance_type: str
    pool: str
    cores: int
    memory_gib: int
    gpus: int = 0


# General-purpose shapes (4..64 cores), a memory-optimized one, and the GPU shape.
_GENERAL = (
    _Shape("m6i.xlarge", "general", 4, 16),
    _Shape("m6i.2xlarge", "general", 8, 32),
    _Shape("m6i.4xlarge", "general", 16, 64),
    _Shape("m6i.8xlarge", "general", 32, 128),
    _Shape("m6i.16xlarge", "general", 64, 256),
    _Shape("r6i.4xlarge", "memory", 16, 128),
)
_GENERAL_WEIGHTS = (0.16, 0.3, 0.24, 0.14, 0.06, 0.1)
_GPU = _Shape("p4d.8xlarge", "gpu", 32, 256, gpus=4)
_GUARANTEED_BELOW = 0.3  # share of pods whose limits equal their requests
_PERCENTILES = (("p50", 0.9), ("p90", 1.05), ("p95", 1.1), ("p99", 1.2))


@dataclass(frozen=True)
class _BoundPod:
    """A pod placed on a node, with its total cpu (millicores) and memory (bytes) requests."""

    pod: Obj
    cpu: int
    memory: int
    priority: str  # Koordinator priority class: koord-prod or koord-batch


@dataclass
class _Node:
    """What the generator tracks per node while it fills it with pods."""

    name: str
    shape: _Shape
    zone: str
    cpu: int  # allocatable millicores
    memory: int  # allocatable bytes
    max_pods: int
    created: int  # epoch seconds
    ip: str
    gpu_left: int
    requested_cpu: int = 0
    requested_memory: int = 0
    pods: list[_BoundPod] = field(default_factory=list)


def cpu_quantity(millicores: int) -> str:
    """Millicores as kubectl prints them: ``"4"`` or ``"3250m"``."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def memory_quantity(num_bytes: int) -> str:
    """Bytes with the largest exact binary suffix: ``"12Gi"``, ``"1536Mi"``, ``"700Ki"``."""
    if not num_bytes:
        return "0"
    if not num_bytes & (GI - 1):
        return f"{num_bytes >> 30}Gi"
    if not num_bytes & (MI - 1):
        return f"{num_bytes >> 20}Mi"
    if not num_bytes & (KI - 1):
        return f"{num_bytes >> 10}Ki"
    return str(num_bytes)


@functools.lru_cache(maxsize=65536)
def rfc3339(epoch: int) -> str:
    """Epoch seconds as the API server writes timestamps: UTC, whole seconds, ``Z``.

    Cached: pods share creation minutes, and formatting dominates large clusters.
    """
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


class _Ids:
    """Deterministic UUIDs from the generator's random stream, drawn in batches."""

    _BATCH = 4096

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._hex = ""
        self._offset = 0

    def uid(self) -> str:
        if self._offset >= len(self._hex):
            self._hex = self._rng.bytes(16 * self._BATCH).hex()
            self._offset = 0
        text = self._hex[self._offset : self._offset + 32]
        self._offset += 32
        return f"{text[:8]}-{text[8:12]}-4{text[13:16]}-a{text[17:20]}-{text[20:32]}"


def generate_cluster(
    *,
    nodes: int = 60,
    pods_per_node: float = 8.0,
    pending_pods: int = 12,
    nrt_nodes: int = 4,
    seed: int = 7,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """Return Nodes, Pods, NodeMetrics and NodeResourceTopologies of a synthetic cluster.

    ``round(nodes * pods_per_node)`` pods are bound and Running, ``pending_pods`` wait
    unscheduled, and ``min(nrt_nodes, nodes)`` GPU nodes publish a NodeResourceTopology. The
    same arguments give the same objects (``now`` defaults to the clock: pass it for that).
    """
    if min(nodes, pending_pods, nrt_nodes) < 0 or pods_per_node < 0:
        raise ValueError("nodes, pods_per_node, pending_pods and nrt_nodes must be >= 0")
    epoch = int((now or datetime.now(UTC)).timestamp())
    # Building ~10 dicts per pod makes the cyclic GC rescan a growing heap again and again
    # (half the time for 50,000 pods); nothing built here is cyclic, so pause it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(nodes, pods_per_node, pending_pods, nrt_nodes, seed, epoch)
    finally:
        if gc_was_enabled:
            gc.enable()


def _generate(
    nodes: int, pods_per_node: float, pending_pods: int, nrt_nodes: int, seed: int, epoch: int
) -> list[Obj]:
    rng = np.random.default_rng(seed)
    ids = _Ids(rng)

    node_states = _plan_nodes(rng, nodes, nrt_nodes, epoch)
    node_objects = [_node_object(ids, node, epoch) for node in node_states]
    _mark_special_nodes(rng, node_objects)
    bound = _bind_pods(rng, ids, node_states, round(nodes * pods_per_node), epoch)
    pending = _pending_pods(rng, ids, node_states, pending_pods, epoch)
    metrics = _node_metrics(rng, ids, node_states, epoch)
    topologies = [_topology(node) for node in node_states if node.shape.gpus][:nrt_nodes]
    return [*node_objects, *bound, *pending, *metrics, *topologies]


# --------------------------------------------------------------------------------------------
# Nodes


def _plan_nodes(rng: np.random.Generator, count: int, nrt_nodes: int, now: int) -> list[_Node]:
    """Pick a shape per node: about 5% GPU nodes (at least ``nrt_nodes``), the rest general."""
    gpu_count = min(count, max(nrt_nodes, count // 20))
    general: list[int] = rng.choice(len(_GENERAL), size=count, p=_GENERAL_WEIGHTS).tolist()
    age_days: list[int] = rng.integers(3, 200, size=count).tolist()
    gpu_slots = set(np.linspace(0, count - 1, gpu_count).round().astype(int).tolist())
    states: list[_Node] = []
    for index in range(count):
        shape = _GPU if index in gpu_slots else _GENERAL[general[index]]
        zone_index = index % len(ZONES)
        zone = ZONES[zone_index]
        states.append(
            _Node(
                name=f"{shape.pool}-{zone[-1]}-{index:04d}",
                shape=shape,
                zone=zone,
                # kubelet's system/kube reservations grow with the machine size
                cpu=shape.cores * 1000 - (80 + 20 * (shape.cores // 4)),
                memory=shape.memory_gib * GI - (256 + 64 * (shape.cores // 4)) * MI,
                max_pods=110 if shape.cores >= 8 else 58,
                created=now - age_days[index] * DAY,
                ip=f"10.{zone_index}.{index // 250}.{index % 250 + 4}",
                gpu_left=shape.gpus,
            )
        )
    return states


def _node_object(ids: _Ids, node: _Node, now: int) -> Obj:
    shape = node.shape
    created = rfc3339(node.created)
    capacity = {
        "cpu": str(shape.cores),
        "memory": memory_quantity(shape.memory_gib * GI),
        "pods": str(node.max_pods),
        "ephemeral-storage": "104845292Ki",
    }
    allocatable = {
        "cpu": cpu_quantity(node.cpu),
        "memory": memory_quantity(node.memory),
        "pods": str(node.max_pods),
        "ephemeral-storage": "96625420948",
    }
    spec: Obj = {"providerID": f"aws:///{node.zone}/i-{ids.uid().replace('-', '')[:17]}"}
    if shape.gpus:
        capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(shape.gpus)
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "uid": ids.uid(),
            "creationTimestamp": created,
            "labels": {
                "kubernetes.io/hostname": node.name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": node.zone,
                "topology.kubernetes.io/region": node.zone[:-1],
                "node.kubernetes.io/instance-type": shape.instance_type,
                "pool": shape.pool,
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": rfc3339(now - 20),
                    "lastTransitionTime": created,
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": node.ip},
                {"type": "Hostname", "address": node.name},
            ],
            "nodeInfo": {
                "kubeletVersion": KUBELET_VERSION,
                "osImage": "Bottlerocket OS 1.20.3",
                "architecture": "amd64",
                "operatingSystem": "linux",
                "containerRuntimeVersion": "containerd://1.6.28",
            },
        },
    }


def _mark_special_nodes(rng: np.random.Generator, node_objects: list[Obj]) -> None:
    """Cordon one or two general nodes and give a few custom Koordinator usage thresholds."""
    general = [obj for obj in node_objects if obj["metadata"]["labels"]["pool"] != "gpu"]
    if not general:
        return
    order: list[int] = rng.permutation(len(general)).tolist()
    cordoned = 2 if len(general) >= 20 else 1
    custom = max(1, len(general) // 15) if len(general) >= 4 else 0
    for position in order[:cordoned]:
        spec = general[position]["spec"]
        spec["unschedulable"] = True
        spec.setdefault("taints", []).append(
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        )
    for position in order[cordoned : cordoned + custom]:
        cpu, memory = (75, 90) if position % 2 else (60, 85)
        thresholds = {"usageThresholds": {"cpu": cpu, "memory": memory}}
        annotations = general[position]["metadata"]["annotations"]
        annotations[ANNOTATION_USAGE_THRESHOLDS] = json.dumps(thresholds, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# Pods


@dataclass(frozen=True)
class _Owner:
    """The controller a pod belongs to (ReplicaSet, StatefulSet or DaemonSet)."""

    kind: str
    name: str
    uid: str
    namespace: str
    app: str


class _Workloads:
    """Controllers pods belong to, and pod names unique within each controller."""

    def __init__(self, ids: _Ids) -> None:
        self._ids = ids
        self._owners: dict[tuple[str, str, str], _Owner] = {}
        self._ordinals: dict[str, int] = {}
        self._serial = 0

    def owner(self, kind: str, namespace: str, app: str) -> _Owner:
        key = (kind, namespace, app)
        if key not in self._owners:
            # A ReplicaSet is named after its Deployment plus the pod-template hash.
            name = f"{app}-{self._ids.uid()[:8]}" if kind == "ReplicaSet" else app
            self._owners[key] = _Owner(kind, name, self._ids.uid(), namespace, app)
        return self._owners[key]

    def pod_name(self, owner: _Owner) -> str:
        if owner.kind == "StatefulSet":
            ordinal = self._ordinals.get(owner.uid, 0)
            self._ordinals[owner.uid] = ordinal + 1
            return f"{owner.name}-{ordinal}"
        self._serial += 1
        return f"{owner.name}-{_suffix(self._serial)}"


def _suffix(serial: int) -> str:
    """A five-character kube-style suffix, distinct for every serial below 27**5."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    scrambled = (serial * 2_654_435_761) % (27**5)  # a multiplier coprime with 27**5
    chars = []
    for _ in range(5):
        scrambled, digit = divmod(scrambled, 27)
        chars.append(alphabet[digit])
    return "".join(chars)


def _bind_pods(
    rng: np.random.Generator, ids: _Ids, nodes: list[_Node], total: int, now: int
) -> list[Obj]:
    """Spread ``total`` Running pods over nodes, filling each to its own request level."""
    if not nodes or total <= 0:
        return []
    counts = _pods_per_node(rng, nodes, total)
    cpu_requests = _requests(rng, counts, [node.cpu for node in nodes], 10, 100)
    memory_requests = _requests(rng, counts, [node.memory for node in nodes], 16 * MI, 128 * MI)
    draws: list[list[float]] = rng.random((total, 5)).tolist()
    workloads = _Workloads(ids)
    pods: list[Obj] = []
    first = 0
    for node, count in zip(nodes, counts.tolist(), strict=True):
        for index in range(first, first + count):
            pod = _place_pod(
                ids,
                workloads,
                node,
                first=index == first,
                cpu=cpu_requests[index],
                memory=memory_requests[index],
                draw=draws[index],
                now=now,
            )
            pods.append(pod)
        first += count
    return pods


def _pods_per_node(rng: np.random.Generator, nodes: list[_Node], total: int) -> np.ndarray:
    """A multinomial draw weighted by node size, capped at each node's pod capacity."""
    caps = np.array([node.max_pods for node in nodes])
    if total > int(caps.sum()):
        raise ValueError(f"{total} pods do not fit the nodes' pod capacity {int(caps.sum())}")
    weights = np.sqrt(np.array([node.shape.cores for node in nodes], dtype=float))
    counts = np.zeros(len(nodes), dtype=np.int64)
    remaining = total
    while remaining:
        probabilities = np.where(counts < caps, weights, 0.0)
        counts += rng.multinomial(remaining, probabilities / probabilities.sum())
        overflow = np.maximum(counts - caps, 0)
        counts -= overflow
        remaining = int(overflow.sum())
    return counts


def _requests(
    rng: np.random.Generator, counts: np.ndarray, allocatable: list[int], step: int, agent: int
) -> list[int]:
    """Per-pod requests, multiples of ``step``, filling each node to a level of 20-90%.

    Every pod gets one ``step``, then a gamma-weighted share of the rest of its node's budget,
    rounded down: a node's requests never add up to more than its allocatable. The first pod
    of each node, its DaemonSet agent, is capped at ``agent`` (lowering keeps the sum fitting).
    """
    alloc = np.array(allocatable, dtype=np.int64)
    fill = rng.uniform(0.2, 0.9, size=len(alloc))
    budget = np.minimum(alloc, np.maximum((alloc * fill).astype(np.int64), step * counts))
    spare = budget - step * counts
    node_of_pod = np.repeat(np.arange(len(alloc)), counts)
    weights = rng.standard_gamma(1.5, size=int(counts.sum()))
    totals = np.bincount(node_of_pod, weights=weights, minlength=len(alloc))
    shares = weights / totals[node_of_pod] * spare[node_of_pod]
    amounts = (np.floor(shares / step).astype(np.int64) + 1) * step
    firsts = (np.cumsum(counts) - counts)[counts > 0]
    amounts[firsts] = np.minimum(amounts[firsts], agent)
    result: list[int] = amounts.tolist()
    return result


def _place_pod(
    ids: _Ids,
    workloads: _Workloads,
    node: _Node,
    *,
    first: bool,
    cpu: int,
    memory: int,
    draw: list[float],
    now: int,
) -> Obj:
    """A Running pod on ``node``; ``draw`` holds five uniform numbers that shape it."""
    kind, namespace, app = _pick_workload(first, node, draw[0], draw[1])
    owner = workloads.owner(kind, namespace, app)
    batch = kind == "ReplicaSet" and draw[2] < 0.2
    gpus = 0
    if node.gpu_left and kind != "DaemonSet":
        gpus, node.gpu_left = 1, node.gpu_left - 1
    created = max(now - 60 * (5 + int(draw[3] * 20_000)), node.created)  # up to two weeks
    pod = _pod(
        ids,
        owner,
        workloads.pod_name(owner),
        requests=(cpu, memory, gpus),
        batch=batch,
        limit_draw=draw[4],
        created=created,
    )
    stamp = rfc3339(created + 2)
    pod["spec"]["nodeName"] = node.name
    pod["status"] = {
        "phase": "Running",
        "qosClass": pod["status"]["qosClass"],
        "hostIP": node.ip,
        "startTime": stamp,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
            {"type": "Initialized", "status": "True", "lastTransitionTime": stamp},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": stamp},
            {"type": "Ready", "status": "True", "lastTransitionTime": stamp},
        ],
    }
    node.requested_cpu += cpu
    node.requested_memory += memory
    node.pods.append(_BoundPod(pod, cpu, memory, "koord-batch" if batch else "koord-prod"))
    return pod


def _pick_workload(
    first: bool, node: _Node, kind_draw: float, app_draw: float
) -> tuple[str, str, str]:
    """(controller kind, namespace, app): the node's DaemonSet agent first, then workloads."""
    if first:
        return ("DaemonSet", *DAEMONSET)
    if node.shape.gpus:
        return ("ReplicaSet", "ml-platform", "trainer" if app_draw < 0.5 else "inference")
    team = TEAMS[int(app_draw * 997) % len(TEAMS)]
    if kind_draw < 0.15:
        return ("StatefulSet", team, STATEFUL_APPS[int(app_draw * len(STATEFUL_APPS))])
    return ("ReplicaSet", team, APPS[int(app_draw * len(APPS))])


def _pod(
    ids: _Ids,
    owner: _Owner,
    name: str,
    *,
    requests: tuple[int, int, int],
    batch: bool,
    limit_draw: float,
    created: int,
    scheduler: str = "default-scheduler",
) -> Obj:
    """A Pending Pod; ``requests`` is (millicores, bytes, GPUs), ``limit_draw`` its QoS."""
    labels = {"app.kubernetes.io/name": owner.app, "app.kubernetes.io/part-of": owner.namespace}
    spec: Obj = {
        "schedulerName": scheduler,
        "containers": _containers(owner.app, *requests, limit_draw),
        "restartPolicy": "Always",
    }
    if batch:
        labels[PRIORITY_LABEL] = "koord-batch"
        spec["priorityClassName"] = "koord-batch"
        spec["priority"] = 5500
    if owner.kind == "DaemonSet":
        spec["tolerations"] = [{"operator": "Exists"}]
    elif requests[2]:
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": owner.namespace,
            "uid": ids.uid(),
            "creationTimestamp": rfc3339(created),
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": owner.kind,
                    "name": owner.name,
                    "uid": owner.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Pending",
            "qosClass": "Guaranteed" if limit_draw < _GUARANTEED_BELOW else "Burstable",
        },
    }


def _containers(app: str, cpu: int, memory: int, gpus: int, limit_draw: float) -> list[Obj]:
    """One container, or the app plus an ``envoy`` sidecar that takes a slice of the requests.

    Guaranteed pods get limits equal to requests; Burstable ones 2x cpu and 1.5x memory.
    """
    parts = [(app, cpu, memory)]
    if limit_draw > 0.75 and cpu >= 200 and memory >= 256 * MI:
        parts = [(app, cpu - 100, memory - 128 * MI), ("envoy", 100, 128 * MI)]
    containers: list[Obj] = []
    for name, part_cpu, part_memory in parts:
        requests = {"cpu": cpu_quantity(part_cpu), "memory": memory_quantity(part_memory)}
        if limit_draw < _GUARANTEED_BELOW:
            limits = dict(requests)
        else:
            limits = {
                "cpu": cpu_quantity(part_cpu * 2),
                "memory": memory_quantity(part_memory // 2 * 3),
            }
        if gpus and not containers:
            requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(gpus)
        containers.append(
            {
                "name": name,
                "image": f"registry.example.com/{name}:1.4.2",
                "resources": {"requests": requests, "limits": limits},
            }
        )
    return containers


def _pending_pods(
    rng: np.random.Generator, ids: _Ids, nodes: list[_Node], count: int, now: int
) -> list[Obj]:
    """Unscheduled pods: mostly for default-scheduler, a few for batch-scheduler, and some
    no node could ever take (they request more cpu than the largest node has)."""
    if count <= 0:
        return []
    workloads = _Workloads(ids)
    largest = max((node.cpu for node in nodes), default=0)
    impossible = max(1, count // 6)
    batch = max(1, count // 4) if count >= 2 else 0
    draws: list[list[float]] = rng.random((count, 3)).tolist()
    pods: list[Obj] = []
    for index, (app_draw, size_draw, age_draw) in enumerate(draws):
        owner = workloads.owner(
            "ReplicaSet", TEAMS[index % len(TEAMS)], APPS[int(app_draw * len(APPS))]
        )
        too_big = index < impossible
        cpu = (largest // 1000 + 8) * 1000 if too_big else 10 * (25 + int(size_draw * 200))
        scheduler = "batch-scheduler" if count - index <= batch else "default-scheduler"
        created = now - 5 - int(age_draw * 900)
        pod = _pod(
            ids,
            owner,
            workloads.pod_name(owner),
            requests=(cpu, (4 + int(size_draw * 8)) * GI, 0),
            batch=scheduler == "batch-scheduler",
            limit_draw=age_draw,
            created=created,
            scheduler=scheduler,
        )
        if too_big:
            pod["status"]["conditions"] = [_unschedulable(len(nodes), created + 1)]
        pods.append(pod)
    return pods


def _unschedulable(node_count: int, when: int) -> Obj:
    """The PodScheduled=False condition kube-scheduler writes for a pod no node fits."""
    return {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": f"0/{node_count} nodes are available: {node_count} Insufficient cpu.",
        "lastProbeTime": None,
        "lastTransitionTime": rfc3339(when),
    }


# --------------------------------------------------------------------------------------------
# NodeMetrics


def _node_metrics(rng: np.random.Generator, ids: _Ids, nodes: list[_Node], now: int) -> list[Obj]:
    """One NodeMetric per node but one; 2-3 of them not updated for longer than 180 s, and
    about a tenth of the nodes hot (cpu usage above 65%)."""
    count = len(nodes)
    if not count:
        return []
    order: list[int] = rng.permutation(count).tolist()
    missing = set(order[:1]) if count >= 2 else set()
    expired_count = max(0, min(3 if count >= 30 else 2, count - len(missing) - 1))
    expired = set(order[len(missing) : len(missing) + expired_count])
    hot = set(order[len(missing) + expired_count :][: max(1, count // 10)])
    draws: list[list[float]] = rng.random((count, 4)).tolist()
    metrics: list[Obj] = []
    for index, node in enumerate(nodes):
        if index in missing:
            continue
        draw = draws[index]
        if index in expired:
            age = EXPIRED_AFTER_SECONDS + 60 + int(draw[0] * 1800)
        else:
            age = 5 + int(draw[0] * 50)
        metrics.append(_node_metric(ids, node, now - age, index in hot, draw))
    return metrics


def _node_metric(ids: _Ids, node: _Node, updated: int, hot: bool, draw: list[float]) -> Obj:
    """Usage consistent with the pods: node usage = system usage + the pods' usage."""
    system_cpu = int(node.cpu * (0.03 + 0.04 * draw[1]))
    system_memory = int(node.memory * (0.04 + 0.04 * draw[1])) >> 10 << 10
    if hot:
        cpu_level = 0.66 + 0.26 * draw[2]
    else:  # requests fill at most 90%, so this stays below 55%: hot nodes are only the chosen
        cpu_level = 0.05 + 0.55 * node.requested_cpu / node.cpu * (0.4 + 0.6 * draw[2])
    memory_level = min(0.9, node.requested_memory / node.memory * (0.6 + 0.35 * draw[3]))
    pods_cpu = max(0, int(node.cpu * cpu_level) - system_cpu)
    pods_memory = max(0, int(node.memory * memory_level) - system_memory)
    pod_usages = _pod_usages(node, pods_cpu, pods_memory)
    cpu_used = system_cpu + sum(cpu for _, cpu, _ in pod_usages)
    memory_used = system_memory + sum(memory for _, _, memory in pod_usages)
    stamp = rfc3339(updated)
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": node.name, "uid": ids.uid(), "creationTimestamp": stamp},
        "spec": {
            "metricCollectPolicy": {"aggregateDurationSeconds": 300, "reportIntervalSeconds": 60}
        },
        "status": {
            "updateTime": stamp,
            "nodeMetric": {
                "nodeUsage": _usage(cpu_used, memory_used),
                "systemUsage": _usage(system_cpu, system_memory),
                "aggregatedNodeUsages": [
                    {
                        "duration": "5m0s",
                        "usage": {
                            percentile: _usage(
                                min(node.cpu, int(cpu_used * factor)),
                                min(node.memory, int(memory_used * factor)),
                            )
                            for percentile, factor in _PERCENTILES
                        },
                    }
                ],
            },
            "podsMetric": [
                {
                    "namespace": bound.pod["metadata"]["namespace"],
                    "name": bound.pod["metadata"]["name"],
                    "priority": bound.priority,
                    "podUsage": _usage(cpu, memory),
                }
                for bound, cpu, memory in pod_usages
            ],
        },
    }


def _pod_usages(node: _Node, pods_cpu: int, pods_memory: int) -> list[tuple[_BoundPod, int, int]]:
    """Share the pods' total usage in proportion to their requests (cpu in m, memory in Ki)."""
    cpu_total = max(node.requested_cpu, 1)
    memory_total = max(node.requested_memory, 1)
    return [
        (
            bound,
            pods_cpu * bound.cpu // cpu_total,
            (pods_memory * bound.memory // memory_total) >> 10 << 10,
        )
        for bound in node.pods
    ]


def _usage(cpu: int, memory: int) -> Obj:
    """A ResourceMap; memory is rounded down to whole Ki, as koordlet reports it."""
    return {"resources": {"cpu": cpu_quantity(cpu), "memory": memory_quantity(memory >> 10 << 10)}}


# --------------------------------------------------------------------------------------------
# NodeResourceTopology


def _topology(node: _Node) -> Obj:
    """Two NUMA zones (``node-0``, ``node-1``) splitting the node; requests land half/half."""
    gpus_used = node.shape.gpus - node.gpu_left
    cpu_alloc, memory_alloc = node.cpu // 2, node.memory // 2
    cpu_used, memory_used = node.requested_cpu // 2, node.requested_memory // 2
    zones = []
    for numa in (0, 1):
        resources = [
            {
                "name": "cpu",
                "capacity": str(node.shape.cores // 2),
                "allocatable": cpu_quantity(cpu_alloc),
                "available": cpu_quantity(max(0, cpu_alloc - cpu_used)),
            },
            {
                "name": "memory",
                "capacity": memory_quantity(node.shape.memory_gib * GI // 2),
                "allocatable": memory_quantity(memory_alloc),
                "available": memory_quantity(max(0, memory_alloc - memory_used)),
            },
        ]
        if node.shape.gpus:
            gpus = node.shape.gpus // 2
            used = (gpus_used + 1 - numa) // 2  # zone node-0 takes the odd one
            resources.append(
                {
                    "name": "nvidia.com/gpu",
                    "capacity": str(gpus),
                    "allocatable": str(gpus),
                    "available": str(max(0, gpus - used)),
                }
            )
        zones.append(
            {
                "name": f"node-{numa}",
                "type": "Node",
                "resources": resources,
                "costs": [
                    {"name": f"node-{other}", "value": 10 if other == numa else 20}
                    for other in (0, 1)
                ],
            }
        )
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": node.name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "container"},
        ],
        "zones": zones,
    }
