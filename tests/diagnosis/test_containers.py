"""Container names: a real HTTP server on a unix socket plays the Docker daemon; pods come from folders."""

from __future__ import annotations

import http.server
import json
import os
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gputop.core.containers import ContainerNames, docker_name, pod_name
from gputop.core.model import ProcessSample
from gputop.core.procinfo import ProcessInfo

CONTAINER = "0123456789ab"
POD_UID = "5f0c8b1e-2a4d-4c1b-9e7f-0a1b2c3d4e5f"


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the slow answer's client is gone by then: that is the point of the test


class _Docker(http.server.BaseHTTPRequestHandler):
    """GET /containers/<id>/json, as the Docker Engine API answers it."""

    requests: list[str] = []
    delay_s = 0.0

    def do_GET(self) -> None:  # noqa: N802 - the handler's name
        type(self).requests.append(self.path)
        time.sleep(self.delay_s)
        if self.path == f"/containers/{CONTAINER}/json":
            body = json.dumps({"Id": CONTAINER + "cdef" * 13, "Name": "/trainer-7"}).encode()
            self.send_response(200)
        else:
            body = b'{"message": "No such container"}'
            self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def address_string(self) -> str:
        return "docker.sock"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def docker(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "docker.sock")
    _Docker.requests = []
    _Docker.delay_s = 0.0
    server = _Server(path, _Docker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield path
    server.shutdown()
    server.server_close()


def test_a_docker_container_is_named_by_the_engine_api(docker: str) -> None:
    assert docker_name(CONTAINER, docker) == "trainer-7"
    assert docker_name("ffffffffffff", docker) is None
    assert _Docker.requests == [f"/containers/{CONTAINER}/json", "/containers/ffffffffffff/json"]


def test_a_podman_container_is_named_by_podmans_docker_compatible_api(docker: str, tmp_path: Path) -> None:
    names = ContainerNames(docker_socket=str(tmp_path / "no-docker.sock"), podman_socket=docker)
    assert names.name(f"podman:{CONTAINER}") == "trainer-7"
    assert names.name(f"docker:{CONTAINER}") is None  # Docker's socket is not Podman's
    assert _Docker.requests == [f"/containers/{CONTAINER}/json"]


def test_names_are_cached_per_container_failures_too(docker: str, tmp_path: Path) -> None:
    names = ContainerNames(docker_socket=docker, pods_dir=str(tmp_path / "none"))
    assert [names.name(f"docker:{CONTAINER}") for _ in range(3)] == ["trainer-7"] * 3
    assert [names.name("docker:ffffffffffff") for _ in range(2)] == [None, None]
    assert len(_Docker.requests) == 2


def test_a_daemon_that_does_not_answer_in_time_costs_one_short_timeout(docker: str) -> None:
    _Docker.delay_s = 2.0
    names = ContainerNames(docker_socket=docker, timeout_s=0.2)
    started = time.monotonic()
    assert names.name(f"docker:{CONTAINER}") is None
    assert names.name(f"docker:{CONTAINER}") is None
    assert time.monotonic() - started < 1.5


def test_no_socket_or_no_daemon_behind_it_is_the_id_as_today(tmp_path: Path) -> None:
    assert docker_name(CONTAINER, str(tmp_path / "missing.sock")) is None
    stale = tmp_path / "stale.sock"
    stale.write_text("")
    os.chmod(stale, 0)
    assert docker_name(CONTAINER, str(stale)) is None


def test_a_pod_is_named_namespace_slash_name_from_the_kubelet_folders(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    (pods / f"ml-team_train-llama-0_{POD_UID}").mkdir(parents=True)
    (pods / "kube-system_coredns-5d78c9869d-abcde_11111111-2222-3333-4444-555555555555").mkdir()
    assert pod_name(POD_UID, str(pods)) == "ml-team/train-llama-0"
    assert pod_name("99999999-2222-3333-4444-555555555555", str(pods)) is None
    assert pod_name(POD_UID, str(tmp_path / "no-such-dir")) is None
    assert ContainerNames(pods_dir=str(pods)).name(f"k8s:{POD_UID}") == "ml-team/train-llama-0"


def test_a_real_process_gets_its_container_name_through_procinfo(
    sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    names = ContainerNames(pods_dir=str(tmp_path))
    # This test's own process is in no container here: the name stays None, the lookup cached.
    info = ProcessInfo(containers=names)
    facts = info.lookup([sleeper.pid])[sleeper.pid]
    assert facts is not None
    joined = facts.apply(ProcessSample(pid=sleeper.pid, gpu_index=0, type="C"))
    assert (joined.container, joined.container_name) == (None, None)
