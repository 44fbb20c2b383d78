"""Koordinator's v1.7 chart's koord-descheduler and koordlet documents, for the demo cluster.

``koord-descheduler-config`` as koordinator-sh/charts versions/v1.7.0 renders it (namespace
``koordinator-system``, port 10251) with LowNodeLoad enabled as the chart's comment says, and
``resource-threshold-config`` as the chart ships it (koordlet then evicts BE pods above the
default 70 % memory).
"""

DESCHEDULER_CONFIG = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
enableContentionProfiling: true
enableProfiling: true
healthzBindAddress: 0.0.0.0:10251
metricsBindAddress: 0.0.0.0:10251
leaderElection:
  resourceLock: leases
  resourceName: koord-descheduler
  resourceNamespace: koordinator-system
deschedulingInterval: 10s
dryRun: false
profiles:
- name: koord-descheduler
  plugins:
    deschedule:
      disabled:
        - name: "*"
    balance:
      enabled:
      - name: LowNodeLoad
    evict:
      disabled:
        - name: "*"
      enabled:
        - name: MigrationController
  pluginConfig:
  - name: MigrationController
    args:
      apiVersion: descheduler/v1alpha2
      kind: MigrationControllerArgs
      evictionPolicy: Eviction
      namespaces:
        exclude:
          - kube-system
          - koordinator-system
      evictQPS: "10"
      evictBurst: 1
  - name: LowNodeLoad
    args:
      apiVersion: descheduler/v1alpha2
      kind: LowNodeLoadArgs
      evictableNamespaces:
        exclude:
          - kube-system
          - koordinator-system
      useDeviationThresholds: false
      lowThresholds:
        cpu: 45
        memory: 55
      highThresholds:
        cpu: 75
        memory: 80
"""

RESOURCE_THRESHOLD_CONFIG = """\
{
  "clusterStrategy": {
    "enable": true
  }
}
"""
