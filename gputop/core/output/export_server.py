"""The HTTP side of ``gputop export``: ``/metrics``, ``/-/ready``, and TLS and basic auth from a web-config file.

The web-config file is the Prometheus exporter-toolkit format (what node_exporter and
dcgm-exporter read with ``--web.config.file``)::

    tls_server_config:
      cert_file: /etc/gputop/tls.crt
      key_file: /etc/gputop/tls.key
    basic_auth_users:
      prometheus: $2y$10$...   # a bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\\n')

Reading it needs PyYAML, and basic auth bcrypt: ``pip install 'gputop-monitor[web]'``.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client.exposition import make_wsgi_app
from prometheus_client.registry import CollectorRegistry

StartResponse = Callable[..., Any]
Environ = Mapping[str, Any]
READY_PATH = "/-/ready"
HEALTHY_PATH = "/-/healthy"
_KNOWN_KEYS = {"tls_server_config", "basic_auth_users", "http_server_config"}


class WebConfigError(ValueError):
    """A web-config file that cannot be used; the message is one line."""


@dataclass(frozen=True)
class WebConfig:
    cert_file: Path | None = None
    key_file: Path | None = None
    users: Mapping[str, bytes] = field(default_factory=dict)  # user -> bcrypt hash


def load_web_config(path: str) -> WebConfig:
    """The TLS files and basic-auth users of an exporter-toolkit web-config file; raises WebConfigError."""
    try:
        import yaml
    except ImportError:
        raise WebConfigError("--web-config-file needs PyYAML: pip install 'gputop-monitor[web]'") from None
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise WebConfigError(f"cannot read the web config {path}: {error.strerror or error}") from None
    try:
        document = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise WebConfigError(f"the web config {path} is not YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(document, dict):
        raise WebConfigError(f"the web config {path} must be a mapping (tls_server_config, basic_auth_users)")
    unknown = sorted(set(document) - _KNOWN_KEYS)
    if unknown:
        raise WebConfigError(f"the web config {path}: unknown key {unknown[0]!r}")
    tls = document.get("tls_server_config") or {}
    cert, key = tls.get("cert_file"), tls.get("key_file")
    if bool(cert) != bool(key):
        raise WebConfigError(f"the web config {path}: tls_server_config needs both cert_file and key_file")
    users = document.get("basic_auth_users") or {}
    if not isinstance(users, dict) or not all(isinstance(v, str) for v in users.values()):
        raise WebConfigError(f"the web config {path}: basic_auth_users maps user names to bcrypt hashes")
    if users:
        try:
            import bcrypt  # noqa: F401 - checked now, so a scrape never meets the missing package
        except ImportError:
            raise WebConfigError("basic_auth_users needs bcrypt: pip install 'gputop-monitor[web]'") from None
    base = Path(path).parent
    return WebConfig(
        cert_file=base / cert if cert else None,
        key_file=base / key if key else None,
        users={str(user): hashed.encode() for user, hashed in users.items()},
    )


class _Auth:
    """Basic auth against bcrypt hashes; a right answer is remembered (as a digest), as bcrypt costs ~50 ms a check
    and Prometheus sends the same one with every scrape."""

    def __init__(self, users: Mapping[str, bytes]) -> None:
        self._users = users
        self._good: set[bytes] = set()  # digests of user:password pairs that passed, never the passwords
        self._lock = threading.Lock()

    def allows(self, header: str | None) -> bool:
        import bcrypt

        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
        except ValueError:
            return False
        hashed = self._users.get(user)
        if hashed is None:
            return False
        key = hashlib.sha256(f"{user}:{password}".encode()).digest()
        with self._lock:
            if key in self._good:
                return True
        try:
            good = bcrypt.checkpw(password.encode(), hashed)
        except ValueError:
            good = False
        if good:
            with self._lock:
                self._good.add(key)
        return good


def exporter_app(
    registry: CollectorRegistry, ready: Callable[[], bool], users: Mapping[str, bytes] | None = None
) -> Callable[[Environ, StartResponse], Iterable[bytes]]:
    """/metrics (prometheus_client's), /-/ready (503 until ``ready()``), /-/healthy; basic auth on all of them."""
    metrics = make_wsgi_app(registry)
    auth = _Auth(users) if users else None

    def app(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if auth is not None and not auth.allows(environ.get("HTTP_AUTHORIZATION")):
            start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="gputop"'),
                                                ("Content-Type", "text/plain")])
            return [b"Unauthorized\n"]
        path = environ.get("PATH_INFO", "")
        if path == READY_PATH:
            if ready():
                start_response("200 OK", [("Content-Type", "text/plain")])
                return [b"ready\n"]
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"not ready: no sample yet\n"]
        if path == HEALTHY_PATH:
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"healthy\n"]
        body: Iterable[bytes] = metrics(environ, start_response)
        return body

    return app


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up, or spoke plain HTTP to TLS: nothing for the exporter's log


class _Server6(_Server):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape a second would fill the journal


def serve(
    host: str, port: int, app: Callable[[Environ, StartResponse], Iterable[bytes]], web: WebConfig
) -> tuple[WSGIServer, threading.Thread]:
    """Listen (TLS when the web config names a certificate) and serve on a daemon thread; raises OSError."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    server_class = _Server6 if family == socket.AF_INET6 else _Server
    server = make_server(host, port, app, server_class=server_class, handler_class=_QuietHandler)
    if web.cert_file is not None and web.key_file is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2  # exporter-toolkit's default minimum
        try:
            context.load_cert_chain(web.cert_file, web.key_file)
        except (OSError, ssl.SSLError) as error:
            server.server_close()
            raise WebConfigError(f"cannot load the TLS certificate {web.cert_file}: {error}") from None
        # The handshake happens on the request's own thread, so a slow client holds up no one else.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=server.serve_forever, name="gputop-export-http", daemon=True)
    thread.start()
    return server, thread
