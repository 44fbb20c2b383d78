"""The clusters schedboard knows and what it read from them: the Cluster model, snapshots
(stored as chains of changes), the engine built over a stored snapshot, and the gateway, the
only code that talks to Kubernetes (connect, read back, watch, apply, drift)."""
