"""Koordinator priority classes (``GetPodPriorityClassWithDefault``).

Upstream: apis/extension/priority.go, priority_utils.go, qos.go and qos_utils.go. Order:

1. the label ``koordinator.sh/priority-class``; when present it decides alone (an unknown value
   means "none" and ``spec.priority`` is then not consulted);
2. else ``spec.priority``: 9000–9999 prod, 7000–7999 mid, 5000–5999 batch, 3000–3999 free;
3. if still none, the QoS: label ``koordinator.sh/qosClass`` (LSE/LSR/LS/SYSTEM → prod, BE →
   batch), else the Kubernetes QoS class (Guaranteed and Burstable → prod, BestEffort → batch).

So a plain Guaranteed or Burstable pod is prod, and a plain BestEffort pod is batch.
"""

from __future__ import annotations

from scoring.objects import Pod

PROD = "koord-prod"
MID = "koord-mid"
BATCH = "koord-batch"
FREE = "koord-free"
NONE = ""

LABEL_PRIORITY_CLASS = "koordinator.sh/priority-class"
LABEL_QOS = "koordinator.sh/qosClass"

_KNOWN = frozenset({PROD, MID, BATCH, FREE})
_RANGES = ((9000, 9999, PROD), (7000, 7999, MID), (5000, 5999, BATCH), (3000, 3999, FREE))
_QOS_PRIORITY = {"LSE": PROD, "LSR": PROD, "LS": PROD, "SYSTEM": PROD, "BE": BATCH}
_KUBE_QOS_PRIORITY = {"Guaranteed": PROD, "Burstable": PROD, "BestEffort": BATCH}


def raw_priority_class(pod: Pod) -> str:
    """``GetPodPriorityClassRaw``: label, then priority range."""
    if LABEL_PRIORITY_CLASS in pod.labels:
        value = pod.labels[LABEL_PRIORITY_CLASS]
        return value if value in _KNOWN else NONE
    if pod.priority is None:
        return NONE
    for low, high, name in _RANGES:
        if low <= pod.priority <= high:
            return name
    return NONE


def priority_class(pod: Pod) -> str:
    """``GetPodPriorityClassWithDefault``."""
    raw = raw_priority_class(pod)
    if raw != NONE:
        return raw
    qos = pod.labels.get(LABEL_QOS)
    if qos is not None and qos in _QOS_PRIORITY:
        return _QOS_PRIORITY[qos]
    return _KUBE_QOS_PRIORITY.get(pod.qos_class, NONE)


def is_prod(pod: Pod) -> bool:
    return priority_class(pod) == PROD
