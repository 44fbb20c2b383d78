"""Wiring policies to clusters: sync jobs, what to write (planners) and where (appliers).

- ``planners``: the desired cluster state from the stored policies (scheduler ConfigMap key,
  node annotations, slo-controller collect policy), and which nodes schedboard owns.
- ``appliers``: a real cluster through :mod:`policy.clusters.gateway`, or a demo cluster
  whose stored snapshot objects stand in for the API server.
- ``jobs``: SyncJob rows: enqueue once, claim with a conditional UPDATE, a per-cluster lease,
  retries of transient errors, recovery of lost or interrupted jobs.
- ``pending``: evaluate pending pods of managed profiles after a refresh.
- ``demo``: NodeMetric usage drifting on demo clusters, so the dashboard is alive.
"""
