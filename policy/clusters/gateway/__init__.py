"""The cluster gateway: the only code that talks to Kubernetes (and imports its client).

- ``connection``: connect with a kubeconfig file and context, or in-cluster; credentials are
  redacted from every repr, log line and error.
- ``readback``: Nodes, Pods, NodeMetrics and NodeResourceTopologies as ``kubectl -o json``
  items, for snapshots; watches.
- ``apply``: declarative pushes (plan = dry-run, apply = write exactly that) of a ConfigMap
  key, node annotations and the slo-controller collect policy.
- ``drift``: what changed in the cluster since schedboard last wrote it.
- ``desired``: the exact values schedboard writes, from plain inputs (pure).
- ``retry`` / ``errors``: transient failures retried with capped, jittered backoff;
  conflicts re-planned; permanent errors raised with the API's message.
"""
