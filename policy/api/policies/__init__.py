"""The policies API: scheduler and descheduler configurations, and the node policies."""
