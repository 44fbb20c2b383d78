"""The REST API (``/api/v1/``)."""
