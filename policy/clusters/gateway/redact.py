"""Keep credentials out of everything a person can read: logs, exceptions, reprs, the UI.

A kubeconfig carries bearer tokens, passwords and client keys, and the Kubernetes client
happily puts some of them in exception texts (``Invalid kube-config file...``) or, at DEBUG,
in logs. Every message the gateway lets out goes through :func:`redact`, which removes the
secret values of every connection opened in this process (registered by ``connection.py``)
and anything that looks like a credential.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "[redacted]"

_PATTERNS = (
    # Authorization headers, in text or in a header dict's repr.
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}"), rf"\1 {MASK}"),
    # Token-ish assignments, in text, JSON or YAML: keep the key, mask the value.
    (
        re.compile(
            r"(?i)([\"']?(?:token|password|client-key-data|client-certificate-data|"
            r"api[_-]?key|secret)[\"']?\s*[:=]\s*)[\"']?[^\s\"',}]+[\"']?"
        ),
        rf"\1{MASK}",
    ),
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        MASK,
    ),
    # user:password@ in URLs
    (re.compile(r"(?<=://)[^/@\s:]+:[^/@\s]+@"), f"{MASK}@"),
)
_known: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember a secret value (a token, a password) so that :func:`redact` removes it."""
    if not value:
        return
    value = value.strip()
    for prefix in ("Bearer ", "bearer ", "Basic ", "basic "):
        value = value.removeprefix(prefix)
    if len(value) >= 6:  # shorter strings would mask ordinary words
        with _lock:
            _known.add(value)


def redact(text: object) -> str:
    """``str(text)`` without any registered secret or credential-looking value."""
    result = str(text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        result = result.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        result = pattern.sub(replacement, result)
    return result


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the formatted message of every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


# The loggers that may see request details: ours, the Kubernetes client's and urllib3's. A
# filter applies only to records logged on its own logger, so each one gets it.
_FILTERED_LOGGERS = (
    "policy.clusters.gateway",
    "kubernetes",
    "kubernetes.client.rest",
    "urllib3",
    "urllib3.connectionpool",
    "client",
)


def install_log_filters() -> None:
    """Attach :class:`RedactingFilter` to the loggers that may carry credentials (idempotent)."""
    for name in _FILTERED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
