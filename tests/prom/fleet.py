"""A fleet of simulated ``gputop export`` hosts served by one process, for the cluster tests and benchmark.

Host ``node-0000`` … serves ``/hosts/<hostname>/metrics``: the exact text ``gputop export``
writes (the exporter's own collector renders it), with a fixed, per-host set of figures
and a sample timestamp that follows the clock. Each host is its own scrape target
(``instance=<hostname>:9400``), as one exporter per machine would be.

``POST /control?host=NAME&mode=MODE`` changes one host: ``live``; ``frozen`` (its sampler
is stuck: it keeps serving the last sample, whose timestamp stops); ``dead`` (its exporter
stops answering: HTTP 503, so Prometheus' ``up`` is 0 and its series go stale).

Hosts ``dgx-00`` … (``--dcgm N``) serve DCGM exporter's format instead. ``--legacy EVERY``:
every EVERY-th host (index % EVERY == EVERY - 1) serves what an exporter from before the host
series (``gputop_host_*``, what its GPUs add up to) served: its GPUs' series alone.

``--diagnoses``: each host also serves what a real exporter's diagnoses add (problem
counts, clock event reasons, ECC and remapped-row counters, unattributed memory, how
long each process has been idle: about 180 more series a host), from the real Diagnoser
run over two samples ten minutes apart.

Run: ``python -m tests.prom.fleet --hosts N --port P [--gpus 8] [--processes 4]`` from the
repository root; it prints ``ready`` once every host's text is rendered.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client.core import Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry

from gputop.core.analysis.diagnosis import Diagnoser, Diagnoses
from gputop.core.model import GpuHealth, GpuSample, HostSample, ProcessSample, RemappedRows, Snapshot
from gputop.core.output.exporter import SnapshotCollector
from gputop.core.output.metric_names import HOST_SERIES_PREFIX, LAST_SAMPLE_TIMESTAMP

GIB = 1024**3
MODEL = "NVIDIA H100 80GB HBM3"
SLOWDOWN_C = 87.0
SMALL_MODEL = "NVIDIA A100-SXM4-40GB"
SMALL_GIB = 40
SMALL_SLOWDOWN_C = 80.0
PLACEHOLDER_TIME = 1234.5
# What an H100 reports when nothing is wrong: its error counters are served (as 0), not left out.
HEALTHY = GpuHealth(
    ecc_uncorrected_volatile=0, ecc_uncorrected_aggregate=0, remapped_rows=RemappedRows(0, 0, False, False)
)


def hostname(index: int) -> str:
    return f"node-{index:04d}"


def gpu_sample(host: int, index: int, processes: int) -> GpuSample:
    """GPU ``index`` of host ``host``: figures spread over the fleet so sorts and counts have something to find.

    One host in 25 has lost its GPU 7; one in 25 has a smaller, cooler-throttling GPU 6 among its H100s.
    """
    if host % 25 == 24 and index == 7:
        return GpuSample(index=index, name=MODEL, uuid=f"GPU-{host:04d}-{index}", lost=True)
    mixed = host % 25 == 11 and index == 6
    total_gib = SMALL_GIB if mixed else 80
    used_gib = (host * 7 + index * 13) % total_gib
    return GpuSample(
        index=index,
        name=SMALL_MODEL if mixed else MODEL,
        uuid=f"GPU-{host:04d}-{index}",
        memory_total=total_gib * GIB,
        memory_used=used_gib * GIB,
        memory_free=(total_gib - used_gib) * GIB,
        utilization_gpu=float((host * 3 + index * 11) % 101),
        utilization_memory=float((host + index) % 50),
        temperature=float(30 + (host * 5 + index * 7) % 60),
        temperature_slowdown=SMALL_SLOWDOWN_C if mixed else SLOWDOWN_C,
        temperature_shutdown=92.0,
        power_draw=float(100 + (host + index * 37) % 500),
        power_limit=700.0,
        fan_speed=float((host + index) % 100),
        clock_sm=1980,
        clock_memory=2619,
        clock_event_reasons=("gpu_idle",) if used_gib == 0 else (),
        health=HEALTHY,
        processes=tuple(
            ProcessSample(
                pid=1000 + index * 100 + k,
                gpu_index=index,
                type="C",
                gpu_memory=(k + 1) * 256 * 1024**2,
                user=f"user{(host + k) % 7}",
                name="python" if k else "trainer",
                container=f"k8s:pod-{host}-{index}" if k == 0 else None,
                # Every fifth host's GPU 0 has a process that stopped using it (idle, with --diagnoses).
                sm_utilization=0.0 if host % 5 == 0 and index == 0 and k == processes - 1 else 30.0,
            )
            for k in range(processes)
        ),
    )


def seconds_to_full(host: int) -> dict[int, float | None]:
    """Every tenth host has GPU 0 filling up in an hour."""
    return {0: 3600.0} if host % 10 == 0 else {}


def snapshot(host: int, gpus: int, processes: int) -> Snapshot:
    return Snapshot(
        timestamp=PLACEHOLDER_TIME,
        hostname=hostname(host),
        host=HostSample(),
        gpus=tuple(gpu_sample(host, i, processes) for i in range(gpus)),
        driver_version="560.35.03",
        cuda_driver_version="12.6",
        source="nvml",
    )


def diagnoses(snapshot: Snapshot) -> Diagnoses:
    """What the exporter's Diagnoser says of this host after watching it for ten minutes."""
    diagnoser = Diagnoser()
    diagnoser.update(replace(snapshot, timestamp=snapshot.timestamp - 600))
    return diagnoser.update(snapshot)


DCGM_MODEL = "NVIDIA A100-SXM4-80GB"
# DCGM exporter's fields for its two GPUs (MiB, %, °C, W); GPU 1 also reports a MIG instance.
DCGM_FIELDS = {
    "DCGM_FI_DEV_FB_USED": (40960.0, 1024.0),
    "DCGM_FI_DEV_FB_FREE": (40000.0, 79407.0),
    "DCGM_FI_DEV_FB_RESERVED": (560.0, 1.0),
    "DCGM_FI_DEV_GPU_UTIL": (97.0, 0.0),
    "DCGM_FI_DEV_GPU_TEMP": (71.0, 33.0),
    "DCGM_FI_DEV_POWER_USAGE": (388.25, 61.5),
}


def dcgm_hostname(index: int) -> str:
    return f"dgx-{index:02d}"


def dcgm_text(index: int) -> bytes:
    """What DCGM exporter serves for a machine with two A100s, one of them split into MIG instances."""
    host = dcgm_hostname(index)
    lines = []
    for name, values in DCGM_FIELDS.items():
        lines.append(f"# HELP {name} {name}.\n# TYPE {name} gauge")
        for gpu, value in enumerate(values):
            labels = (
                f'gpu="{gpu}",UUID="GPU-{host}-{gpu}",device="nvidia{gpu}",modelName="{DCGM_MODEL}",'
                f'Hostname="{host}",DCGM_FI_DRIVER_VERSION="535.104.05"'
            )
            lines.append(f"{name}{{{labels}}} {value!r}")
            if gpu == 1:
                lines.append(f'{name}{{{labels},GPU_I_ID="1",GPU_I_PROFILE="1g.10gb"}} 512.0')
    return ("\n".join(lines) + "\n").encode()


class _WithoutHostSeries:
    """The exporter's collector as it was before it served the host series."""

    def __init__(self, collector: SnapshotCollector) -> None:
        self._collector = collector

    def collect(self) -> Iterator[Metric]:
        return (family for family in self._collector.collect() if not family.name.startswith(HOST_SERIES_PREFIX))


def exporter_text(
    host: int, gpus: int, processes: int, diagnosed: bool = False, legacy: bool = False
) -> tuple[bytes, bytes]:
    """The host's /metrics text split around its sample timestamp's value."""
    # gputop's names alone: the DCGM names an exporter serves beside them by default are left out of
    # the cluster view (``exporter="gputop"``), and would double what Prometheus holds of the fleet.
    collector = SnapshotCollector(hostname(host), names="gputop")
    sample = snapshot(host, gpus, processes)
    collector.update(sample, seconds_to_full(host), diagnoses(sample) if diagnosed else None)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_WithoutHostSeries(collector) if legacy else collector)
    text = generate_latest(registry)
    marker = f'{LAST_SAMPLE_TIMESTAMP}{{hostname="{hostname(host)}"}} '.encode()
    before, _, after = text.partition(marker + repr(PLACEHOLDER_TIME).encode())
    return before + marker, after


class Fleet:
    """The hosts' texts and modes; the HTTP handler reads them."""

    def __init__(
        self, hosts: int, gpus: int, processes: int, dcgm: int = 0, diagnosed: bool = False, legacy: int = 0
    ) -> None:
        self.texts = {
            hostname(i): exporter_text(i, gpus, processes, diagnosed, bool(legacy) and i % legacy == legacy - 1)
            for i in range(hosts)
        }
        self.texts.update({dcgm_hostname(i): (dcgm_text(i), b"") for i in range(dcgm)})
        self.modes: dict[str, str] = {}
        self.frozen_at: dict[str, float] = {}
        self.lock = threading.Lock()

    def body(self, host: str) -> bytes | None:
        with self.lock:
            mode = self.modes.get(host, "live")
            frozen = self.frozen_at.get(host)
        if mode == "dead" or host not in self.texts:
            return None
        before, after = self.texts[host]
        if not after:
            return before  # DCGM exporter: no sample timestamp of its own
        at = frozen if mode == "frozen" and frozen is not None else time.time()
        return before + repr(at).encode() + after

    def control(self, host: str, mode: str) -> None:
        with self.lock:
            self.modes[host] = mode
            if mode == "frozen":
                self.frozen_at[host] = time.time()


def serve(fleet: Fleet, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            parts = self.path.split("/")
            body = fleet.body(parts[2]) if len(parts) == 4 and parts[1] == "hosts" else None
            if body is None:
                self._answer(503, b"exporter down\n")
            else:
                self._answer(200, body, "text/plain; version=0.0.4; charset=utf-8")

        def do_POST(self) -> None:  # noqa: N802
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            fleet.control(query["host"][0], query["mode"][0])
            self._answer(200, b"ok\n")

        def _answer(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--dcgm", type=int, default=0, help="hosts dgx-00 … served as DCGM exporter")
    parser.add_argument("--diagnoses", action="store_true", help="serve the diagnoses' series too")
    parser.add_argument("--legacy", type=int, default=0, help="every Nth host serves no host series")
    args = parser.parse_args()
    server = serve(Fleet(args.hosts, args.gpus, args.processes, args.dcgm, args.diagnoses, args.legacy), args.port)
    print("ready", flush=True)
    server.serve_forever(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
