"""A mixed fleet for the DCGM tests: real ``gputop export`` hosts on the fake driver, and dcgm-exporter pages.

``alpha`` serves both name sets (``--names both``), ``beta`` DCGM's alone (``--names dcgm``), each
on its own fake driver. The pages (``dcgm_pages.render``) are served by one in-process HTTP
server, each host its own scrape target (``instance=<name>:9400``); ``dgx-d`` is scraped by a
second job without ``honor_labels``, whose target has pod labels of its own (dcgm-exporter's pod in
a GPU operator), so Prometheus renames the page's ``pod``/``namespace``/``container`` to
``exported_*``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fakenvml.fixture import FakeNvml
from fakenvml.scenario import Scenario
from prom import free_port, http_get, terminate, wait_for

EXPORTER_POD = ', pod: "nvidia-dcgm-exporter-7x2k", namespace: "gpu-operator", container: "exporter"'


@dataclass
class Host:
    """One ``gputop export`` process on its own fake driver."""

    name: str
    scenario: Scenario
    process: subprocess.Popen[bytes]
    port: int

    @property
    def instance(self) -> str:
        return f"127.0.0.1:{self.port}"

    def text(self) -> str:
        body = http_get(f"http://{self.instance}/metrics")
        assert body is not None
        return body

    def first_sample(self, series: str = "DCGM_FI_DEV_GPU_TEMP") -> None:
        """Until the exporter serves ``series`` (GPM's figures need a second sample: DCGM_FI_PROF_SM_ACTIVE)."""
        wait_for(f"{self.name}'s {series}", lambda: f"{series}{{" in (
            http_get(f"http://{self.instance}/metrics") or "") or None)

    def stop(self) -> None:
        terminate(self.process)


def start(name: str, scenario: Scenario, names: str, work: Path, interval_s: float = 3600) -> Host:
    """``gputop export --names NAMES`` on a fake driver reporting ``scenario``; one sample an hour by default.

    GPM's figures are those between two samples: a scenario with GPM needs a short ``interval_s``.
    """
    fake = FakeNvml(work / name)
    fake.write(scenario)
    port = free_port()
    with open(work / f"{name}.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gputop", "export", "--listen", f"127.0.0.1:{port}", "--interval", f"{interval_s:g}",
             "--hostname", name, "--names", names],
            env=fake.env(), stdout=log, stderr=subprocess.STDOUT,
        )
    return Host(name, scenario, process, port)


def serve_pages(pages: Mapping[str, str]) -> ThreadingHTTPServer:
    """``/hosts/<name>/metrics``: the page of each host, on a daemon thread."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = pages[self.path.split("/")[2]].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    return server


def scrape_configs(pages_port: int, honoured: list[str], exporters: list[str], renamed: list[str]) -> str:
    """The gputop job's targets (honor_labels: the pages in ``honoured`` and the exporters' addresses), then a
    job without honor_labels for the pages in ``renamed``, as PrometheusServer's ``static_configs``."""

    def target(name: str, labels: str = "") -> str:
        return (f'      - targets: ["127.0.0.1:{pages_port}"]\n        labels: {{instance: "{name}:9400", '
                f'__metrics_path__: "/hosts/{name}/metrics"{labels}}}\n')

    return (
        "".join(target(name) for name in honoured)
        + "".join(f'      - targets: ["{address}"]\n' for address in exporters)
        + "  - job_name: gpu-operator\n    scrape_interval: 1s\n    static_configs:\n"
        + "".join(target(name, EXPORTER_POD) for name in renamed)
    )
