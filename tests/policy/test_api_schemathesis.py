"""Property-based API test: schemathesis generates requests for every operation of the OpenAPI
schema and sends them, in-process, to the WSGI application as an authenticated editor.

No answer may be a server error, and every answer must match the schema: documented status
code, content type, headers and body. Requests carry ``If-Match: *``, so PUT, PATCH and DELETE
reach their handlers instead of stopping at 428; data that breaks the schema (negative cases)
must be refused with a 4xx. A few examples per operation keep it under a minute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import Group, User
from django.core import signals
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig
from schemathesis.generation.modes import GenerationMode

from config.wsgi import application
from policy.accounts.services import create_token
from policy.clusters.models import Cluster
from policy.policies.models import SchedulerConfiguration, SchedulerProfile

CHECKS = [
    not_a_server_error,
    negative_data_rejection,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def _schema() -> Any:
    raw = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    # The examples and fuzzing phases: a few generated requests per operation (the coverage
    # phase's exhaustive boundary cases take minutes over the whole API).
    config = SchemathesisConfig.from_dict(
        {
            "generation": {"mode": "all"},  # valid data, and data the schema forbids
            # A body over API_MAX_REQUEST_BYTES is refused with 413 before it is read.
            "checks": {
                "negative_data_rejection": {
                    "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428]
                }
            },
            "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
        }
    )
    loaded = schemathesis.openapi.from_dict(raw, config=config)
    loaded.app = application
    return loaded


schema = _schema()


@pytest.fixture(autouse=True)
def keep_the_test_connection() -> Iterator[None]:
    """Requests end by closing "old" connections, which would close the test's transaction
    (Django's own test client does the same)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def editor_key(db: None) -> str:
    user = User.objects.create_user("fuzz")
    user.groups.add(Group.objects.get(name="editor"))
    cluster = Cluster.objects.create(name="fuzz")
    configuration = SchedulerConfiguration.objects.create(cluster=cluster)
    SchedulerProfile.objects.create(configuration=configuration, scheduler_name="fuzz")
    return create_token(user, name="fuzz")[1]


# One test per operation, parametrized here (schemathesis's own ``parametrize`` gives every
# operation the same test id, which a run split over processes cannot tell apart).
OPERATIONS = [result.ok() for result in schema.get_all_operations()]
HYPOTHESIS = settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    database=None,
)


@pytest.mark.django_db
@pytest.mark.parametrize("operation", OPERATIONS, ids=[op.label for op in OPERATIONS])
def test_api_conforms_to_its_schema(operation: Any, editor_key: str) -> None:
    # identity: called in-process, schemathesis reads the WSGI body as sent, and a client that
    # asks for gzip (GZipMiddleware answers it) decodes it itself, which this harness does not.
    headers = {
        "Authorization": f"Token {editor_key}",
        "If-Match": "*",
        "Accept-Encoding": "identity",
    }
    cases = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    )

    @HYPOTHESIS
    @given(case=cases)
    def conforms(case: Any) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    conforms()
