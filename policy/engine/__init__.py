"""The engine tier: each cluster's engine state held by one long-lived process, asked questions.

See docs/architecture.md ("The engine tier").
"""
