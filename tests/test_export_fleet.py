"""``gputop export`` fit for a fleet: readiness, the per-process series cap, TLS and basic auth from a web config."""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import bcrypt
import pytest
from fakenvml.fixture import FakeNvml
from fakenvml.scenario import NO_SUCH_PID, GiB, Scenario
from prom import free_port, terminate, wait_for
from prometheus_client.exposition import generate_latest
from ui.factory import StaticSource

from gputop.core.model import GpuSample, HostSample, ProcessSample, Snapshot
from gputop.core.output.export_server import WebConfigError, load_web_config
from gputop.core.output.exporter import Exporter, SnapshotCollector, make_registry
from gputop.core.sampler import Sampler

GPU = GpuSample(index=0, name="NVIDIA H100 80GB HBM3", uuid="GPU-a", memory_total=80 * GiB, memory_used=10 * GiB)


def get(url: str, auth: tuple[str, str] | None = None, context: ssl.SSLContext | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if auth is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(":".join(auth).encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class GatedSource(StaticSource):
    """One GPU, whose first sample waits until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__((GPU,))
        self.gate = threading.Event()

    def sample(self) -> tuple[GpuSample, ...]:
        self.gate.wait(10)
        return self.gpus


def test_ready_answers_503_until_the_first_sample_and_200_after() -> None:
    source = GatedSource()
    sampler = Sampler(source)
    sampler.open()
    exporter = Exporter(sampler, interval_s=3600, hostname="alpha")
    host, port = exporter.start("127.0.0.1", 0)
    try:
        assert get(f"http://{host}:{port}/-/ready") == (503, "not ready: no sample yet\n")
        assert get(f"http://{host}:{port}/-/healthy") == (200, "healthy\n")
        source.gate.set()
        wait_for("ready", lambda: get(f"http://{host}:{port}/-/ready")[0] == 200 or None, 10, 0.02)
        assert get(f"http://{host}:{port}/-/ready") == (200, "ready\n")
        status, text = get(f"http://{host}:{port}/metrics")
        assert status == 200 and 'gputop_gpu_memory_used_bytes{gpu="0",hostname="alpha"' in text
    finally:
        source.gate.set()
        exporter.stop()
        sampler.close()


def with_processes(memory_gib: list[int | None]) -> Snapshot:
    processes = tuple(
        ProcessSample(pid=100 + n, gpu_index=0, type="C", gpu_memory=None if gib is None else gib * GiB, user="u")
        for n, gib in enumerate(memory_gib)
    )
    return Snapshot(timestamp=1.0, hostname="alpha", host=HostSample(), gpus=(GpuSample(index=0, processes=processes),))


def served_pids(text: str) -> list[str]:
    return sorted(line.split('pid="')[1].split('"')[0] for line in text.splitlines()
                  if line.startswith("gputop_process_gpu_memory_bytes{"))


def test_the_process_cap_keeps_the_largest_by_gpu_memory_and_says_how_many_it_cut() -> None:
    collector = SnapshotCollector(names="gputop", max_process_series=2)
    collector.update(with_processes([1, 7, None, 3, 2]))
    text = generate_latest(make_registry(collector)).decode()
    assert served_pids(text) == ["101", "103"]  # 7 GiB and 3 GiB
    assert 'gputop_process_series_dropped{hostname="alpha"} 3.0' in text
    collector = SnapshotCollector(names="gputop", max_process_series=5)
    collector.update(with_processes([1, 7, None, 3, 2]))
    text = generate_latest(make_registry(collector)).decode()
    assert served_pids(text) == ["100", "101", "103", "104"]  # 102 has no memory figure: no series, never 0
    assert 'gputop_process_series_dropped{hostname="alpha"} 0.0' in text


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("--max-process-series=-1", "argument --max-process-series: must be 0 or more, not -1"),
    ],
)
def test_a_bad_process_cap_exits_2_with_one_line(argument: str, message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "gputop", "--demo", "export", argument],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and result.stderr.splitlines()[-1].endswith(message)


def make_certificate(directory: Path) -> Path:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
         "-keyout", str(directory / "tls.key"), "-out", str(directory / "tls.crt")],
        check=True, capture_output=True,
    )
    return directory / "tls.crt"


def test_tls_and_basic_auth_from_a_web_config_file_on_the_fake_driver(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    """The real command: TLS with a certificate made here, a bcrypt user, and the process cap on three processes."""
    certificate = make_certificate(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    config = tmp_path / "web.yml"
    config.write_text(f"tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
                      f"basic_auth_users:\n  prometheus: {hashed}\n")
    fake_nvml.write(Scenario().gpu()
                    .process(gpu=0, pid=NO_SUCH_PID, used=1 * GiB)
                    .process(gpu=0, pid=NO_SUCH_PID + 1, used=5 * GiB)
                    .process(gpu=0, pid=NO_SUCH_PID + 2, used=3 * GiB))
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gputop", "export", "--listen", f"127.0.0.1:{port}", "--interval", "3600",
         "--hostname", "alpha", "--max-process-series", "1", "--web-config-file", str(config)],
        env=fake_nvml.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stderr is not None
        assert process.stderr.readline() == f"gputop: serving https://127.0.0.1:{port}/metrics\n"
        trusted = ssl.create_default_context(cafile=str(certificate))
        url = f"https://127.0.0.1:{port}"
        good = ("prometheus", "s3cret")
        wait_for("ready", lambda: get(f"{url}/-/ready", good, trusted)[0] == 200 or None, 20)
        assert get(f"{url}/metrics", None, trusted)[0] == 401
        assert get(f"{url}/metrics", ("prometheus", "wrong"), trusted)[0] == 401
        assert get(f"{url}/metrics", ("mallory", "s3cret"), trusted)[0] == 401
        status, text = get(f"{url}/metrics", good, trusted)
        assert status == 200
        assert served_pids(text) == [str(NO_SUCH_PID + 1)]  # the 5 GiB one
        assert 'gputop_process_series_dropped{hostname="alpha"} 2.0' in text
        with pytest.raises(ConnectionError):  # plain HTTP gets no answer from a TLS port
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
        with pytest.raises(urllib.error.URLError):  # a certificate nobody vouches for is refused
            urllib.request.urlopen(f"{url}/metrics", timeout=5)
        assert process.poll() is None  # the failed handshakes did not hurt the exporter
    finally:
        terminate(process)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (None, "cannot read the web config {path}: No such file or directory"),
        ("tls_server_config:\n  cert_file: a.crt\n", "the web config {path}: tls_server_config needs both "
                                                     "cert_file and key_file"),
        ("basic_auth: {}\n", "the web config {path}: unknown key 'basic_auth'"),
        ("- a\n", "the web config {path} must be a mapping (tls_server_config, basic_auth_users)"),
        ("basic_auth_users:\n  u: [1]\n", "the web config {path}: basic_auth_users maps user names to bcrypt hashes"),
    ],
)
def test_a_bad_web_config_is_said_in_one_line(tmp_path: Path, config: str | None, message: str) -> None:
    path = tmp_path / "web.yml"
    if config is not None:
        path.write_text(config)
    with pytest.raises(WebConfigError) as raised:
        load_web_config(str(path))
    assert str(raised.value) == message.format(path=path)


def test_a_certificate_that_cannot_be_loaded_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "web.yml"
    path.write_text("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n")
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--demo", "export", "--listen", f"127.0.0.1:{free_port()}",
         "--web-config-file", str(path)],
        capture_output=True, text=True, timeout=30,
    )
    assert (result.returncode, result.stderr) == (
        2, f"gputop: cannot load the TLS certificate {tmp_path}/a.crt: [Errno 2] No such file or directory\n"
    )
