"""Container names for container ids: Docker's Engine API, and Kubernetes' pod log folders.

- ``docker:<id>``: ``GET /containers/<id>/json`` on the Docker socket (read
  only, a short timeout) gives the name; ``podman:<id>`` the same on Podman's
  Docker-compatible socket (the rootful service's).
- ``k8s:<pod uid>``: the kubelet keeps ``/var/log/pods/<namespace>_<name>_<uid>``
  for every pod on the node, so the uid gives ``namespace/name``.

Every answer is cached per container, a failure too: with no socket, no
permission or no match the id stays as it is, and only the first look at a
container costs anything.
"""

from __future__ import annotations

import functools
import json
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import http.client

DOCKER_SOCKET = "/var/run/docker.sock"
PODMAN_SOCKET = "/run/podman/podman.sock"
PODS_DIR = "/var/log/pods"
TIMEOUT_S = 0.25


@functools.cache
def _unix_connection() -> Callable[[str, float], http.client.HTTPConnection]:
    """HTTP over a unix socket. Made on first use: http.client imports ssl, which loads OpenSSL
    (4 MiB), and only a machine with Docker containers needs it."""
    import http.client

    class UnixConnection(http.client.HTTPConnection):
        def __init__(self, path: str, timeout_s: float) -> None:
            super().__init__("localhost", timeout=timeout_s)
            self._path = path

        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self._path)
            except OSError:
                sock.close()
                raise
            self.sock = sock

    return UnixConnection


def docker_name(container_id: str, socket_path: str = DOCKER_SOCKET, timeout_s: float = TIMEOUT_S) -> str | None:
    """The name of a Docker container, or None when the daemon cannot say."""
    if not container_id.isalnum() or not os.path.exists(socket_path):
        return None
    import http.client

    connection = _unix_connection()(socket_path, timeout_s)
    try:
        connection.request("GET", f"/containers/{container_id}/json")
        response = connection.getresponse()
        if response.status != 200:
            return None
        document: Any = json.loads(response.read(1 << 20))
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()
    name = document.get("Name") if isinstance(document, dict) else None
    return name.lstrip("/") or None if isinstance(name, str) else None


def pod_name(pod_uid: str, pods_dir: str = PODS_DIR) -> str | None:
    """``namespace/name`` of the pod with this uid, from the kubelet's pod log folders."""
    suffix = "_" + pod_uid
    try:
        entries = os.listdir(pods_dir)
    except OSError:
        return None
    for entry in entries:
        if entry.endswith(suffix):
            namespace, _, name = entry[: -len(suffix)].partition("_")
            if namespace and name:
                return f"{namespace}/{name}"
    return None


class ContainerNames:
    """Names for the container labels of ``procinfo`` (``docker:<id12>``, ``podman:<id12>``, ``k8s:<uid>``), cached."""

    def __init__(
        self,
        docker_socket: str = DOCKER_SOCKET,
        pods_dir: str = PODS_DIR,
        timeout_s: float = TIMEOUT_S,
        podman_socket: str = PODMAN_SOCKET,
    ) -> None:
        self.docker_socket = docker_socket
        self.podman_socket = podman_socket
        self.pods_dir = pods_dir
        self.timeout_s = timeout_s
        self._names: dict[str, str | None] = {}

    def name(self, container: str | None) -> str | None:
        """The name of ``container``; None when unknown."""
        if container is None:
            return None
        if container in self._names:
            return self._names[container]
        kind, _, ident = container.partition(":")
        name = None
        if kind in ("docker", "podman"):
            socket_path = self.docker_socket if kind == "docker" else self.podman_socket
            name = docker_name(ident, socket_path, self.timeout_s)
        elif kind == "k8s":
            name = pod_name(ident, self.pods_dir)
        self._names[container] = name
        return name
