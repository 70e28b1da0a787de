"""A real Prometheus server and real ``gputop export`` processes on loopback, for the cluster tests.

Prometheus is Debian's ``prometheus`` package (``apt-get install -y --no-install-recommends
prometheus``); tests that need it are skipped with that line as the reason when the binary
is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

PROMETHEUS = shutil.which("prometheus")
SKIP_REASON = "needs the prometheus binary: apt-get install -y --no-install-recommends prometheus"

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = 20.0, every_s: float = 0.1) -> T:
    """Poll ``probe`` until it returns something other than None; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = probe()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(every_s)


def http_get(url: str, timeout_s: float = 2.0) -> str | None:
    """The body, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            body: bytes = response.read()
            return body.decode()
    except (urllib.error.URLError, OSError):
        return None


def terminate(process: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL if it has not gone within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Exporter:
    """One ``gputop --demo export`` process acting as one host."""

    def __init__(self, hostname: str, gpus: int, log_dir: Path, interval_s: float = 3600) -> None:
        self.hostname = hostname
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self._log = open(log_dir / f"export-{hostname}.log", "w")  # noqa: SIM115 - closed in stop()
        # One sample an hour by default: the figures stay put, so a test can compare them exactly.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gputop", "--demo", "--demo-gpus", str(gpus), "export",
             "--listen", f"127.0.0.1:{self.port}", "--interval", f"{interval_s:g}", "--hostname", hostname],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def metrics(self) -> str:
        """The /metrics text once the first sample is served."""
        return wait_for(
            f"{self.hostname}'s exporter",
            lambda: (text if (text := http_get(self.url)) and "gputop_gpu_memory_total_bytes{" in text else None),
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


class PrometheusServer:
    """``prometheus`` on a free loopback port, scraping ``targets`` every second, data in ``work``.

    ``static_configs`` (YAML, indented for the job) replaces the plain target list; ``port``
    reuses an address, so a stopped server can come back where the cluster view looks; ``rule_files``
    are loaded as Prometheus' rule files.
    """

    def __init__(
        self,
        work: Path,
        targets: Sequence[str] = (),
        job: str = "gputop",
        static_configs: str | None = None,
        scrape_interval_s: float = 1.0,
        port: int | None = None,
        rule_files: Sequence[Path] = (),
    ) -> None:
        assert PROMETHEUS is not None, SKIP_REASON
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = work / "prometheus.yml"
        if static_configs is None:
            static_configs = f"      - targets: {json.dumps(list(targets))}\n"
        every = f"{scrape_interval_s:g}s"
        config.write_text(
            f"global:\n  scrape_interval: {every}\n  scrape_timeout: {every}\n  evaluation_interval: {every}\n"
            f"scrape_configs:\n  - job_name: {job}\n    honor_labels: true\n    static_configs:\n{static_configs}"
            + (f"rule_files: {json.dumps([str(path) for path in rule_files])}\n" if rule_files else "")
        )
        (work / "data").mkdir(exist_ok=True)
        self._log = open(work / "prometheus.log", "a")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work / 'data'}",
             "--storage.tsdb.retention.time=1h", f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "GOMAXPROCS": "2"},
        )
        wait_for("prometheus to be ready", lambda: http_get(f"{self.url}/-/ready"), 60)

    def query(self, promql: str) -> list[dict[str, Any]]:
        body = http_get(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        if body is None:
            return []
        result: list[dict[str, Any]] = json.loads(body)["data"]["result"]
        return result

    def stop(self) -> None:
        terminate(self.process)
        self._log.close()


class FleetProcess:
    """``tests/prom/fleet.py``: ``hosts`` simulated exporters in one process, each its own scrape target."""

    def __init__(
        self,
        hosts: int,
        log_dir: Path,
        gpus: int = 8,
        processes: int = 4,
        dcgm: int = 0,
        diagnoses: bool = False,
        legacy: int = 0,
    ) -> None:
        self.hostnames = [f"node-{i:04d}" for i in range(hosts)] + [f"dgx-{i:02d}" for i in range(dcgm)]
        self.port = free_port()
        self._log = open(log_dir / "fleet.log", "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.prom.fleet", "--hosts", str(hosts), "--port", str(self.port),
             "--gpus", str(gpus), "--processes", str(processes), "--dcgm", str(dcgm), "--legacy", str(legacy),
             *(["--diagnoses"] if diagnoses else [])],
            cwd=Path(__file__).parents[2],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "ready\n", "the fleet simulator did not start"

    def static_configs(self) -> str:
        """One scrape target per host, ``instance`` named after it, all served by this process."""
        return "".join(
            f"      - targets: [\"127.0.0.1:{self.port}\"]\n"
            f"        labels: {{instance: \"{name}:9400\", __metrics_path__: \"/hosts/{name}/metrics\"}}\n"
            for name in self.hostnames
        )

    def set_mode(self, hostname: str, mode: str) -> None:
        """``live``, ``frozen`` (timestamp stops) or ``dead`` (503: up 0)."""
        query = urllib.parse.urlencode({"host": hostname, "mode": mode})
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/control?{query}", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=5) as response:
            response.read()

    def stop(self) -> None:
        terminate(self.process)
        self._log.close()
