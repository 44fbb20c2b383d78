"""A JSON parser that never reads more than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes.

DRF's parsers read the request stream directly, past Django's body-size check; a body sent
without a Content-Length (chunked) would otherwise be read whole.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import exceptions, parsers, status


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
        return super().parse(stream, media_type, parser_context)
