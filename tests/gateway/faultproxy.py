"""A small fault-injecting reverse proxy for the gateway's retry tests.

It sits on 127.0.0.1 in front of the test kube-apiserver, speaking TLS with the same
certificate (so clients verify it like the real server), and forwards every request unless a
fault is queued for it:

- ``fail(n, status)``: answer the next ``n`` matching requests with an API ``Status`` error
  (500, 503, 429...) without forwarding them;
- ``delay(n, seconds)``: hold the next ``n`` matching requests, then forward them anyway (the
  client may have timed out and retried: the late original still lands, as on a real network);
- ``slow_answer(n, seconds)``: forward the next ``n`` matching requests at once but hold the
  answer (the request lands; the client times out and retries a request that already landed);
- ``reset(n)``: close the connection without an answer;
- ``before(callback)``: run ``callback`` just before forwarding the next matching request
  (a concurrent writer slipping in between a client's read and its write).

Every request is logged in ``requests`` as (method, path, outcome).
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

Match = Callable[[str, str], bool]

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


def any_request(method: str, path: str) -> bool:
    return True


def matching(method: str = "", path_contains: str = "") -> Match:
    """Requests with this method (any if empty) whose path contains ``path_contains``."""

    def match(request_method: str, path: str) -> bool:
        return (not method or request_method == method) and path_contains in path

    return match


@dataclass
class _Fault:
    kind: str  # fail | delay | slow_answer | reset | before
    remaining: int
    match: Match
    status: int = 500
    seconds: float = 0.0
    callback: Callable[[], None] | None = None


class FaultProxy:
    def __init__(
        self, upstream: str, *, ca_file: str, cert_file: str, key_file: str, port: int = 0
    ) -> None:
        target = urlsplit(upstream)
        self.upstream_host = target.hostname or "127.0.0.1"
        self.upstream_port = target.port or 443
        self._upstream_tls = ssl.create_default_context(cafile=ca_file)
        self._server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._server_tls.load_cert_chain(cert_file, key_file)
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self.requests: list[tuple[str, str, str]] = []
        self._server = _Server(("127.0.0.1", port), self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- scripting faults -------------------------------------------------------------------

    def fail(self, times: int, status: int = 500, match: Match = any_request) -> None:
        self._add(_Fault("fail", times, match, status=status))

    def delay(self, times: int, seconds: float, match: Match = any_request) -> None:
        self._add(_Fault("delay", times, match, seconds=seconds))

    def slow_answer(self, times: int, seconds: float, match: Match = any_request) -> None:
        self._add(_Fault("slow_answer", times, match, seconds=seconds))

    def reset(self, times: int, match: Match = any_request) -> None:
        self._add(_Fault("reset", times, match))

    def before(self, callback: Callable[[], None], match: Match = any_request) -> None:
        self._add(_Fault("before", 1, match, callback=callback))

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self.requests.clear()

    def wait_for(self, count: int, method: str = "", path_contains: str = "") -> list[str]:
        """The matching outcomes once there are ``count`` of them (late, delayed requests)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = self.outcomes(method, path_contains)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise TimeoutError(f"only {self.outcomes(method, path_contains)} after 10 s")

    def outcomes(self, method: str = "", path_contains: str = "") -> list[str]:
        """Outcomes of the logged requests that match (``forwarded 200``, ``fail 500``...)."""
        with self._lock:
            return [
                outcome
                for m, path, outcome in self.requests
                if (not method or m == method) and path_contains in path
            ]

    def _add(self, fault: _Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def _take(self, method: str, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.remaining > 0 and fault.match(method, path):
                    fault.remaining -= 1
                    return fault
        return None

    def _log(self, method: str, path: str, outcome: str) -> None:
        with self._lock:
            self.requests.append((method, path, outcome))

    # -- forwarding -------------------------------------------------------------------------

    def forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPSConnection(
            self.upstream_host, self.upstream_port, context=self._upstream_tls, timeout=60
        )
        try:
            connection.request(method, path, body=body or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP_HEADERS]
            return response.status, kept, data
        finally:
            connection.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], proxy: FaultProxy) -> None:
        self.proxy = proxy
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        # TLS handshake in the request's own thread, so a slow client never blocks accept().
        try:
            wrapped = self.proxy._server_tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            super().finish_request(wrapped, client_address)
        finally:
            # wrap_socket detached the plain socket the server closes afterwards: close the
            # TLS one here, or every connection leaks until garbage collection.
            self.shutdown_request(wrapped)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _handle(self) -> None:
        proxy = self.server.proxy
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        fault = proxy._take(self.command, self.path)
        if fault and fault.kind == "fail":
            proxy._log(self.command, self.path, f"fail {fault.status}")
            return self._status(fault.status)
        if fault and fault.kind == "reset":
            proxy._log(self.command, self.path, "reset")
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return None
        if fault and fault.kind == "delay":
            time.sleep(fault.seconds)
        if fault and fault.kind == "before" and fault.callback:
            fault.callback()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
        status, response_headers, data = proxy.forward(self.command, self.path, headers, body)
        if fault and fault.kind == "slow_answer":
            time.sleep(fault.seconds)
        prefix = {"delay": "delayed ", "slow_answer": "slowly answered "}
        outcome = f"{prefix.get(fault.kind, '') if fault else ''}forwarded {status}"
        proxy._log(self.command, self.path, outcome)
        self.send_response(status)
        for key, value in response_headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:  # the client gave up (timed out) meanwhile
            self.close_connection = True
        return None

    def _status(self, code: int) -> None:
        body = json.dumps(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "message": f"injected fault {code}",
                "reason": "InternalError" if code >= 500 else "TooManyRequests",
                "code": code,
            }
        ).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if code == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle
