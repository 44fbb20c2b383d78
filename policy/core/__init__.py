"""What every domain shares and nothing in it depends on: the versioned model base, choices,
validators (Kubernetes rules from the engine), filters, query parameters, caches, health
checks, and the broker: the one place that sends Celery tasks, by name."""
