"""Which pods a LowNodeLoad round may evict, and why the others are kept.

Upstream: the plugin's pod filter (low_node_load.go ``NewLowNodeLoad``: the evictor's Filter,
then ``podSelectors``, then ``evictableNamespaces``) over MigrationController's filter
(pkg/descheduler/controllers/migration/arbitrator/filter.go ``initFilters``:
``FilterPodWithMaxEvictionCost``, pkg/descheduler/evictions/evictions.go ``EvictorFilter``, the
controller's ``namespaces``). The annotation ``descheduler.alpha.kubernetes.io/evict`` bypasses the
evictor's constraints. Not modelled: existing PodMigrationJobs, the expected-replicas and
workload limits (they need state schedboard does not read).
"""

from __future__ import annotations

from scoring.descheduler.args import LowNodeLoadArgs
from scoring.descheduler.config import MigrationSettings
from scoring.objects import Pod
from scoring.podselectors import label_selector
from scoring.selectors import SelectorError

ANNOTATION_EVICT = "descheduler.alpha.kubernetes.io/evict"
ANNOTATION_EVICTION_COST = "scheduling.koordinator.sh/eviction-cost"
ANNOTATION_MIRROR = "kubernetes.io/config.mirror"
ANNOTATION_CONFIG_SOURCE = "kubernetes.io/config.source"
MAX_EVICTION_COST = 2147483647
SYSTEM_CRITICAL_PRIORITY = 2000000000


def _owner_kinds(pod: Pod) -> list[str]:
    return [str(ref.get("kind")) for ref in pod.owner_references]


def evictor_reason(pod: Pod, migration: MigrationSettings) -> str | None:
    """Why MigrationController's filter keeps the pod, or None when it may be evicted."""
    if pod.annotations.get(ANNOTATION_EVICTION_COST) == str(MAX_EVICTION_COST):
        return "eviction cost is the maximum"
    if (
        migration.job_mode == "ReservationFirst"
        and pod.scheduler_name not in migration.scheduler_names
    ):
        return (
            f"schedulerName {pod.scheduler_name!r} is not one of {list(migration.scheduler_names)}"
        )
    ns = pod.namespace
    if migration.namespaces_include and ns not in migration.namespaces_include:
        return f"namespace {ns} is not in MigrationController namespaces.include"
    if ns in migration.namespaces_exclude:
        return f"namespace {ns} is in MigrationController namespaces.exclude"
    if ANNOTATION_EVICT in pod.annotations:
        return None
    return _constraint_reason(pod, migration)


def _constraint_reason(pod: Pod, migration: MigrationSettings) -> str | None:
    kinds = _owner_kinds(pod)
    if "DaemonSet" in kinds:
        return "pod is a DaemonSet pod"
    if ANNOTATION_MIRROR in pod.annotations:
        return "pod is a mirror pod"
    if pod.annotations.get(ANNOTATION_CONFIG_SOURCE, "api") != "api":
        return "pod is a static pod"
    if pod.terminating:
        return "pod is terminating"
    if not kinds and not (migration.evict_failed_bare_pods and pod.phase == "Failed"):
        return "pod does not have any ownerRefs"
    priority = pod.priority or 0
    if not migration.evict_system_critical_pods:
        if priority >= SYSTEM_CRITICAL_PRIORITY:
            return "pod has system critical priority"
        if migration.priority_threshold is not None and priority >= migration.priority_threshold:
            return "pod has higher priority than specified priority class threshold"
    volumes = pod.volumes
    if not migration.evict_local_storage_pods and any(
        "emptyDir" in v or "hostPath" in v for v in volumes
    ):
        return "pod has local storage and descheduler is not configured with evictLocalStoragePods"
    if migration.ignore_pvc_pods and any("persistentVolumeClaim" in v for v in volumes):
        return "pod has a PVC and descheduler is configured to ignore PVC pods"
    return None


def args_reason(pod: Pod, args: LowNodeLoadArgs) -> str | None:
    """LowNodeLoad's own filters: ``podSelectors`` (any matches) and ``evictableNamespaces``."""
    selectors = []
    for i, (_, raw) in enumerate(args.pod_selectors):
        if raw is None:
            continue
        try:
            selectors.append(label_selector(raw, f"podSelectors[{i}].selector"))
        except SelectorError:
            continue
    if selectors and not any(s.matches(pod.labels) for s in selectors):
        return "pod matches none of podSelectors"
    if args.evictable_include and pod.namespace not in args.evictable_include:
        return f"namespace {pod.namespace} is not in evictableNamespaces.include"
    if pod.namespace in args.evictable_exclude:
        return f"namespace {pod.namespace} is in evictableNamespaces.exclude"
    return None


def filter_reason(pod: Pod, args: LowNodeLoadArgs, migration: MigrationSettings) -> str | None:
    """The plugin's ``podFilter``: None when the pod passes."""
    return evictor_reason(pod, migration) or args_reason(pod, args)
