"""WSGI entry point (``gunicorn config.wsgi``).

The URLconf is loaded here, when the process starts, rather than by its first request: that
imports every view and fills the URL resolver's tables, about 0.4 s of a first page on a small
machine (docs/benchmarks.md, "First views").
"""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()
get_resolver().reverse_dict  # noqa: B018  (the property loads the URLconf and fills the tables)
