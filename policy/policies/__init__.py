"""What admins edit: scheduler configurations (documents kept as written), profiles, LoadAware
args, node threshold and NodeMetric collect policies; their validation as the real components
validate them, the editing services, and what they render into (ConfigMap key, annotations)."""
