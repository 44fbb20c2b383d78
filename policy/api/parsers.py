"""A JSON parser that never reads more than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes and reads
with the shared input limits (:mod:`scoring.inputs`).

DRF's parsers read the request stream directly, past Django's body-size check; a body sent
without a Content-Length (chunked) would otherwise be read whole. Deeply nested JSON would
exhaust the parser's recursion (a 500); it is a 400 naming the limit instead.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import exceptions, parsers, status

from scoring import load_json


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "too_large"


class JSONParser(parsers.JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and stream is not None:
            body = stream.read(limit + 1)
            if len(body) > limit:
                raise RequestTooLarge(f"The request body may not exceed {limit} bytes.")
            stream = io.BytesIO(body)
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
            return load_json(text, source="request body", parse_constant=_no_constants)
        except ValueError as exc:  # InputLimitError and UnicodeDecodeError are ValueErrors
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None


def _no_constants(name: str) -> Any:
    """NaN and Infinity are not JSON (DRF's strict mode)."""
    raise ValueError(f"Out of range float values are not JSON compliant: {name!r}")
