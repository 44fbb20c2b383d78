"""The sync API: pushes, dry-run plans, refreshes, drift and the sync job history."""
