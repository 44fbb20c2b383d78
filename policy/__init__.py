"""The schedboard Django app: clusters and their snapshots, roles, API tokens, dashboard."""
