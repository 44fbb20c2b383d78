"""Connections to a cluster's API server: the one place the ``kubernetes`` client is set up.

A :class:`ConnectionSpec` says where the credentials are (a kubeconfig file and context, or the
pod's service account); it never holds them, so it is safe to store, log and show. The
credentials are read when :func:`connect` builds the client, registered for redaction, and
stay inside the client's configuration: :class:`Connection`'s repr, its errors and the
gateway's logs never contain them.

Every request goes through :meth:`Connection.request`: raw JSON in and out (exactly what
``kubectl get -o json`` shows, no model round trip), a connect/read timeout, retries of
transient failures (``retry.py``) and errors translated with the API server's message.
urllib3's own retries are switched off so that every retry is ours: counted, logged, capped.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import quote

import yaml
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import SERVICE_CERT_FILENAME, SERVICE_TOKEN_FILENAME
from urllib3.exceptions import ReadTimeoutError

from policy.clusters.gateway import retry
from policy.clusters.gateway.errors import ConfigurationError, TransientError
from policy.clusters.gateway.redact import install_log_filters, redact, register_secret
from scoring import InputError, load_yaml

# What the kubernetes client's config loaders raise on a file that is not a usable kubeconfig
# (binary data, YAML of the wrong shape, missing keys): each becomes a ConfigurationError.
_UNUSABLE_CONFIG = (
    ConfigException,
    OSError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    yaml.YAMLError,
)

logger = logging.getLogger(__name__)

Json = dict[str, Any]
ConnectionKind = Literal["kubeconfig", "in-cluster"]

USER_AGENT = "schedboard"
MERGE_PATCH = "application/merge-patch+json"
JSON = "application/json"


class _ClusterLike(Protocol):
    kind: str
    kubeconfig_path: str
    kubeconfig_context: str


@dataclass(frozen=True)
class ConnectionSpec:
    """Where a cluster's credentials are; holds no secret itself."""

    kind: ConnectionKind
    kubeconfig_path: str = ""
    context: str = ""
    # In-cluster only; the defaults are where Kubernetes mounts the service account.
    token_path: str = SERVICE_TOKEN_FILENAME
    ca_path: str = SERVICE_CERT_FILENAME
    environ: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    # A kubeconfig user with an ``exec`` or ``auth-provider`` section runs a command on this
    # server to get credentials: refused unless the operator's setting allows it.
    credential_plugins: bool = False

    @classmethod
    def from_cluster(
        cls, cluster: _ClusterLike, *, credential_plugins: bool = False
    ) -> ConnectionSpec:
        """The spec of a ``policy.clusters.models.Cluster`` (duck-typed: no ORM here)."""
        if cluster.kind == "kubeconfig":
            return cls(
                "kubeconfig",
                cluster.kubeconfig_path,
                cluster.kubeconfig_context,
                credential_plugins=credential_plugins,
            )
        if cluster.kind == "in-cluster":
            return cls("in-cluster")
        raise ConfigurationError(f"a {cluster.kind!r} cluster has no API server to connect to")


@dataclass(frozen=True)
class Timeouts:
    """Seconds to open a connection and to wait for each read of the answer; ``total``, when
    set, bounds every request of the connection together (a check made while someone waits:
    no request starts, or waits, past it)."""

    connect: float = 5.0
    read: float = 30.0
    total: float | None = None


class Connection:
    """An API client for one cluster. Use as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        api_client: k8s_client.ApiClient,
        *,
        description: str,
        retry_policy: retry.RetryPolicy = retry.DEFAULT_POLICY,
        timeouts: Timeouts = Timeouts(),
    ) -> None:
        self._client = api_client
        self.server = str(api_client.configuration.host)
        self.description = description
        self.retry_policy = retry_policy
        self.timeouts = timeouts
        self._ends = None if timeouts.total is None else time.monotonic() + timeouts.total

    def __repr__(self) -> str:
        return f"<Connection {self.description} server={self.server}>"

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int | bool] | None = None,
        body: Json | list[Json] | None = None,
        content_type: str = JSON,
        what: str | None = None,
    ) -> Json:
        """One API call, retried on transient failures; returns the decoded JSON answer.

        Raises a :class:`~policy.clusters.gateway.errors.GatewayError` subclass on failure.
        """
        label = what or f"{method} {path}"
        return retry.call(
            lambda: self._attempt(method, path, query, body, content_type, label),
            self.retry_policy,
            what=label,
        )

    def _attempt(
        self,
        method: str,
        path: str,
        query: Mapping[str, str | int | bool] | None,
        body: Json | list[Json] | None,
        content_type: str,
        what: str,
    ) -> Json:
        response = self._send(method, path, query, body, content_type, self.timeouts.read)
        try:
            data = response.read()
        finally:
            response.release_conn()
        if not 200 <= response.status < 300:
            raise retry.HttpStatusError(response.status, data, dict(response.headers), what)
        return json.loads(data) if data else {}

    def stream(
        self,
        path: str,
        *,
        query: Mapping[str, str | int | bool],
        read_timeout: float,
        idle_timeout: float | None = None,
    ) -> Iterator[Json]:
        """GET ``path`` and yield each JSON line of the answer as it arrives (watches).

        Opening the stream is retried like any request; a failure mid-stream is raised
        translated, and the caller decides whether to resume from the last version it saw.
        With ``idle_timeout``, the stream ends quietly once nothing arrived for that long.
        """

        def open_stream() -> Any:
            response = self._send("GET", path, query, None, JSON, read_timeout)
            if not 200 <= response.status < 300:
                data = response.read()
                response.release_conn()
                raise retry.HttpStatusError(response.status, data, dict(response.headers), path)
            return response

        response = retry.call(open_stream, self.retry_policy, what=f"watch {path}")
        try:
            if idle_timeout is not None:
                _set_read_timeout(response, idle_timeout)
            buffer = b""
            for chunk in response.stream(4096, decode_content=True):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
        except ReadTimeoutError as exc:
            if idle_timeout is None:
                raise retry.translate(exc) from None
        except Exception as exc:
            raise retry.translate(exc) from None
        finally:
            response.close()  # a watch left early must not go back to the pool half-read
            response.release_conn()

    def _send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str | int | bool] | None,
        body: Json | list[Json] | None,
        content_type: str,
        read_timeout: float,
    ) -> Any:
        """Send one request; the urllib3 response is returned unread (preload is off)."""
        connect_timeout, read_timeout = self._within_total(read_timeout)
        params = [(key, _query_value(value)) for key, value in (query or {}).items()]
        verb, url, headers, payload, _ = self._client.param_serialize(
            method,
            path,
            query_params=params,
            header_params={"Accept": JSON, "Content-Type": content_type},
            body=body,
            auth_settings=["BearerToken"],
        )
        rest_response = self._client.call_api(
            verb,
            url,
            header_params=headers,
            body=payload,
            _request_timeout=(connect_timeout, read_timeout),
        )
        return rest_response.response

    def _within_total(self, read_timeout: float) -> tuple[float, float]:
        """(connect, read) timeouts cut to what is left of ``timeouts.total``."""
        if self._ends is None:
            return self.timeouts.connect, read_timeout
        left = self._ends - time.monotonic()
        if left <= 0:
            raise TransientError(
                f"{self.server} did not answer within {self.timeouts.total:g} s; gave up"
            )
        return min(self.timeouts.connect, left), min(read_timeout, left)

    def version(self) -> Json:
        """The API server's ``/version``: a cheap check that the connection works."""
        return self.request("GET", "/version")


def _query_value(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def path_segment(value: str) -> str:
    """``value`` quoted for use as one segment of an API path."""
    return quote(value, safe="")


def connect(
    spec: ConnectionSpec,
    *,
    retry_policy: retry.RetryPolicy = retry.DEFAULT_POLICY,
    timeouts: Timeouts = Timeouts(),
) -> Connection:
    """Read the credentials ``spec`` points to and return a :class:`Connection`.

    Raises :class:`ConfigurationError` (redacted) when they cannot be read.
    """
    install_log_filters()
    configuration = k8s_client.Configuration()
    try:
        if spec.kind == "kubeconfig":
            description = _load_kubeconfig(spec, configuration)
        elif spec.kind == "in-cluster":
            description = _load_in_cluster(spec, configuration)
        else:
            raise ConfigurationError(f"unknown connection kind {spec.kind!r}")
    except ConfigurationError:
        raise
    except _UNUSABLE_CONFIG as exc:
        raise ConfigurationError(f"cannot use the {spec.kind} credentials: {_shown(exc)}") from None
    configuration.retries = False  # every retry is ours (retry.py): counted, logged, capped
    configuration.debug = False  # http.client debug output would print the Authorization header
    _protect(configuration)
    api_client = k8s_client.ApiClient(configuration)
    api_client.user_agent = USER_AGENT  # names schedboard in the API server's audit log
    return Connection(
        api_client,
        description=description,
        retry_policy=retry_policy,
        timeouts=timeouts,
    )


def _load_kubeconfig(spec: ConnectionSpec, configuration: k8s_client.Configuration) -> str:
    if not spec.kubeconfig_path:
        raise ConfigurationError("a kubeconfig connection needs the kubeconfig file's path")
    if not os.path.exists(spec.kubeconfig_path):
        raise ConfigurationError(f"kubeconfig {spec.kubeconfig_path!r} does not exist")
    if not os.path.isfile(spec.kubeconfig_path):
        raise ConfigurationError(f"kubeconfig {spec.kubeconfig_path!r} is not a file")
    contexts, current = list_contexts(spec.kubeconfig_path)
    context = spec.context or (current or "")
    if context not in contexts:
        raise ConfigurationError(
            f"kubeconfig {spec.kubeconfig_path!r} has no context {context!r} "
            f"(it has: {', '.join(sorted(contexts)) or 'none'})"
        )
    if not spec.credential_plugins:
        _refuse_credential_plugins(spec.kubeconfig_path, context)
    k8s_config.load_kube_config(
        config_file=spec.kubeconfig_path,
        context=context,
        client_configuration=configuration,
        persist_config=False,  # never rewrite the operator's file
    )
    return f"kubeconfig={spec.kubeconfig_path} context={context}"


CREDENTIAL_PLUGINS = ("exec", "auth-provider")


def _shown(exc: BaseException) -> str:
    """What a person is told of a credentials failure: a credential plugin's own output (its
    stderr may hold anything) is logged, not shown."""
    text = redact(exc)
    if text.startswith("exec:"):
        logger.warning("kubeconfig credential plugin failed: %s", text)
        return "the credential plugin (exec) failed; its output is in the server log"
    return text


def _refuse_credential_plugins(kubeconfig_path: str, context: str) -> None:
    """:class:`ConfigurationError` when ``context``'s user would run a command here."""
    try:
        with open(kubeconfig_path, encoding="utf-8") as handle:
            document = load_yaml(handle.read(), source=f"kubeconfig {kubeconfig_path}")
    except (OSError, UnicodeDecodeError, yaml.YAMLError, InputError) as exc:
        raise ConfigurationError(
            f"cannot read kubeconfig {kubeconfig_path!r}: {redact(exc)}"
        ) from None
    entries = document if isinstance(document, dict) else {}
    found = _named(entries.get("contexts"), context).get("context")
    user_name = found.get("user") if isinstance(found, dict) else None
    user = _named(entries.get("users"), user_name).get("user") or {}
    plugins = [key for key in CREDENTIAL_PLUGINS if isinstance(user, dict) and user.get(key)]
    if plugins:
        raise ConfigurationError(
            f"kubeconfig {kubeconfig_path!r}: user {user_name!r} of context {context!r} gets "
            f"its credentials by running a command on this server ({', '.join(plugins)}); "
            "that is allowed only with KUBECONFIG_CREDENTIAL_PLUGINS=true"
        )


def _named(entries: Any, name: Any) -> dict[str, Any]:
    """The entry called ``name`` of a kubeconfig list (``{}`` when there is none)."""
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    return {}


def list_contexts(kubeconfig_path: str) -> tuple[list[str], str | None]:
    """The context names in a kubeconfig and its current context (no credentials read)."""
    try:
        contexts, current = k8s_config.list_kube_config_contexts(config_file=kubeconfig_path)
    except _UNUSABLE_CONFIG as exc:
        raise ConfigurationError(
            f"cannot read kubeconfig {kubeconfig_path!r} (is it a kubeconfig file?): {redact(exc)}"
        ) from None
    names = [str(context["name"]) for context in contexts or []]
    return names, (str(current["name"]) if current else None)


def _load_in_cluster(spec: ConnectionSpec, configuration: k8s_client.Configuration) -> str:
    loader = k8s_config.incluster_config.InClusterConfigLoader(
        token_filename=spec.token_path,
        cert_filename=spec.ca_path,
        environ=spec.environ if spec.environ is not None else os.environ,
    )
    loader.load_and_set(configuration)
    return "in-cluster service account"


def _protect(configuration: k8s_client.Configuration) -> None:
    """Register the configuration's secrets for redaction, now and after each token refresh
    (exec plugins and projected service-account tokens rotate)."""

    def register(config: k8s_client.Configuration) -> None:
        for value in config.api_key.values():
            register_secret(str(value))
        register_secret(getattr(config, "password", None))

    register(configuration)
    refresh = configuration.refresh_api_key_hook
    if refresh is not None:

        def refresh_and_register(config: k8s_client.Configuration) -> None:
            refresh(config)
            register(config)

        configuration.refresh_api_key_hook = refresh_and_register


def _set_read_timeout(response: Any, seconds: float) -> None:
    """Wait at most ``seconds`` for each further read of an open ``response`` (its headers came
    within the connection's own read timeout)."""
    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is not None:
        sock.settimeout(seconds)
