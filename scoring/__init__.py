"""schedboard's plugin engine: Kubernetes objects in, explained scheduling decisions out.

A pure library (stdlib, numpy, PyYAML). Django, Celery and the Kubernetes client live at the
edges of the project and call into it; nothing here imports them.
"""
