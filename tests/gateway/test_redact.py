"""Credentials never reach a message, a repr or a log line."""

from __future__ import annotations

import logging

import pytest

from policy.clusters.gateway.errors import GatewayError
from policy.clusters.gateway.redact import RedactingFilter, redact, register_secret


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abc.def-ghi_123", "Authorization: Bearer [redacted]"),
        ("token: s3cr3t-value", "token: [redacted]"),
        ('{"password": "hunter22"}', '{"password": [redacted]}'),
        ("client-key-data: LS0tLS1CRUdJTg==", "client-key-data: [redacted]"),
        ("https://alice:pw@example.com/api", "https://[redacted]@example.com/api"),
        (
            "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
            "[redacted]",
        ),
        ("nodes is forbidden: User cannot list", "nodes is forbidden: User cannot list"),
    ],
)
def test_patterns(text: str, kept: str) -> None:
    assert redact(text) == kept


def test_registered_secrets_are_removed_anywhere() -> None:
    register_secret("Bearer 0123456789abcdef-registered")
    assert redact("x=0123456789abcdef-registered;") == "x=[redacted];"


def test_errors_are_redacted() -> None:
    register_secret("another-secret-token-42")
    error = GatewayError("failed with another-secret-token-42 and Bearer xyzxyzxyz")
    assert "another-secret-token-42" not in str(error)
    assert "xyzxyzxyz" not in repr(error)


def test_log_filter(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("policy.clusters.gateway.test")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO, logger="policy.clusters.gateway.test"):
        logger.info("sending %s", "Authorization: Bearer abcdefgh12345")
    assert caplog.messages == ["sending Authorization: Bearer [redacted]"]
