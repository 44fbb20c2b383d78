"""Helpers for the policy API tests: small clients that create objects and check answers."""

from __future__ import annotations

from typing import Any

CONFIGS = "/api/v1/scheduler-configurations/"
PROFILES = "/api/v1/profiles/"
ARGS = "/api/v1/loadaware-args/"
THRESHOLDS = "/api/v1/node-threshold-policies/"
COLLECT = "/api/v1/collect-policies/"


def ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content[:2000])
    body: dict[str, Any] = response.json() if response.content else {}
    return body


def post(client: Any, url: str, data: Any, status: int = 201, **headers: str) -> dict[str, Any]:
    return ok(client.post(url, data, format="json", **headers), status)


def patch(client: Any, url: str, data: Any, if_match: str, status: int = 200) -> dict[str, Any]:
    return ok(client.patch(url, data, format="json", HTTP_IF_MATCH=if_match), status)


def fields_of(body: dict[str, Any]) -> dict[str, str]:
    """``field -> type`` of a 400's ``errors``."""
    return {e["field"]: e["type"] for e in body["errors"]}


def make_configuration(client: Any, cluster_id: int, **fields: Any) -> dict[str, Any]:
    return post(client, CONFIGS, {"cluster": cluster_id, **fields})


def make_profile(client: Any, configuration_id: int, name: str, **fields: Any) -> dict[str, Any]:
    return post(
        client, PROFILES, {"configuration": configuration_id, "scheduler_name": name, **fields}
    )


LOADAWARE_PLUGINS = {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling", "weight": 2}]}}
