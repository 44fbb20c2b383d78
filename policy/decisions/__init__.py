"""Placement decisions: evaluating a pod against a snapshot (API, pages, pending pods after a
refresh), recording what the cluster's scheduler did and whether the engine agrees, decision
storage and retention, and what-if comparisons of two configurations."""
