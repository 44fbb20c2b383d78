"""The feature gates kube-scheduler 1.35 consults while defaulting and validating its config.

Values are the 1.35 defaults (no ``--feature-gates`` flag). Version skew worth knowing:

- ``DynamicResourceAllocation`` is GA (locked on) since 1.34, so the default profile includes the
  ``DynamicResources`` plugin, inserted just before ``DefaultPreemption``.
- ``DRASchedulerFilterTimeout`` is beta (on) since 1.34: ``DynamicResourcesArgs.filterTimeout``
  defaults to ``10s``.
- ``DRADeviceBindingConditions`` is alpha (off) in 1.34 and 1.35 and beta (on) from 1.36:
  ``bindingTimeout`` is not defaulted in 1.35, and setting it is an error.
- ``StorageCapacityScoring`` is alpha (off) in 1.35: ``VolumeBindingArgs.shape`` is not
  defaulted, and setting it is an error.
"""

from __future__ import annotations

from types import MappingProxyType

KUBERNETES_VERSION = "1.35"

FEATURE_GATES = MappingProxyType(
    {
        "DynamicResourceAllocation": True,
        "DRASchedulerFilterTimeout": True,
        "DRADeviceBindingConditions": False,
        "DRAResourceClaimDeviceStatus": True,
        "StorageCapacityScoring": False,
    }
)


def enabled(gate: str) -> bool:
    """Whether a feature gate is on in kube-scheduler 1.35 by default."""
    return FEATURE_GATES[gate]
