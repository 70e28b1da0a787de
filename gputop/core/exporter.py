"""``gputop export``: the latest snapshot as Prometheus metrics on ``/metrics``.

The collector builds fresh metric families from the latest snapshot on every
scrape, so a process that has gone is simply not there any more: no label set
outlives the thing it describes. A value the hardware does not provide is left
out, never exported as 0.
"""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Iterator, Mapping
from wsgiref.simple_server import WSGIServer

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import CollectorRegistry

from gputop import __version__
from gputop.core.dcgm_export import dcgm_families
from gputop.core.diagnosis import NO_DIAGNOSES, Diagnoses
from gputop.core.diagnosis.metrics import XidCounter, diagnosis_families
from gputop.core.export_processes import DEFAULT_MAX_PROCESS_SERIES, process_families
from gputop.core.export_server import WebConfig, exporter_app, serve
from gputop.core.foresight import Watcher
from gputop.core.host_rollup import rollup_families
from gputop.core.metric_names import (
    EXPORTER_INFO,
    GPU_ANSWERING,
    GPU_FIGURES,
    GPU_LABELS,
    GPU_LOST,
    GPU_SECONDS_TO_FULL,
    LAST_SAMPLE_TIMESTAMP,
    SAMPLE_ERRORS,
    UP,
)
from gputop.core.model import GpuSample, Snapshot
from gputop.core.sampler import Sampler, SamplerThread
from gputop.core.settings import Thresholds


class ListenError(ValueError):
    """A ``--listen`` address that cannot be used; the message is one line."""


class SnapshotCollector:
    """A prometheus-client collector that serves the latest snapshot.

    ``update`` and ``fail`` are called from the sampler thread, ``collect``
    from the HTTP server's threads; one lock keeps the three consistent.
    """

    def __init__(
        self,
        hostname: str | None = None,
        names: str = "both",
        max_process_series: int = DEFAULT_MAX_PROCESS_SERIES,
        job_label: bool = False,
    ) -> None:
        self._hostname = hostname
        self._job_label = job_label  # --job-label: per-process series get the Slurm job's id
        self._max_process_series = max_process_series
        self._gputop_names = names in ("gputop", "both")
        self._dcgm_names = names in ("dcgm", "both")
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._seconds_to_full: Mapping[int, float | None] = {}
        self._diagnoses = NO_DIAGNOSES
        self._xids = XidCounter()
        self._errors = 0
        self._sampled = False

    @property
    def ready(self) -> bool:
        """A sample has been served (``/-/ready``): a later failed one does not take that back."""
        return self._sampled

    def update(
        self,
        snapshot: Snapshot,
        seconds_to_full: Mapping[int, float | None] | None = None,
        diagnoses: Diagnoses | None = None,
    ) -> None:
        """Serve this snapshot from now on; ``seconds_to_full`` maps GPU index to the OOM forecast."""
        with self._lock:
            self._sampled = True
            self._snapshot = snapshot
            self._seconds_to_full = dict(seconds_to_full or {})
            self._diagnoses = NO_DIAGNOSES if diagnoses is None else diagnoses
            self._xids.update(snapshot)

    def fail(self, error: BaseException) -> None:
        """The latest sample failed: serve no GPU figures until one succeeds (never stale ones)."""
        with self._lock:
            self._snapshot = None
            self._seconds_to_full = {}
            self._errors += 1

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            snapshot = self._snapshot
            seconds_to_full = self._seconds_to_full
            diagnoses = self._diagnoses
            xid_counts = dict(self._xids.counts)
            errors = self._errors
        hostname = self._hostname or (snapshot.hostname if snapshot else socket.gethostname())
        if not self._gputop_names:
            # DCGM's names alone: a drop-in for dcgm-exporter, which serves nothing while it cannot read.
            if snapshot is not None:
                yield from dcgm_families(hostname, snapshot)
            return

        up = GaugeMetricFamily(
            UP, "1 when the latest sample succeeded, 0 when it failed.", labels=["hostname"]
        )
        up.add_metric([hostname], 1.0 if snapshot is not None else 0.0)
        yield up
        failures = CounterMetricFamily(
            SAMPLE_ERRORS, "Samples that failed since the exporter started.", labels=["hostname"]
        )
        failures.add_metric([hostname], float(errors))
        yield failures
        if snapshot is None:
            return
        cap = self._max_process_series
        yield from _gputop_families(hostname, snapshot, seconds_to_full, diagnoses, xid_counts, cap, self._job_label)
        if self._dcgm_names:
            yield from dcgm_families(hostname, snapshot, beside_gputop=True)


def _gputop_families(
    hostname: str,
    snapshot: Snapshot,
    seconds_to_full: Mapping[int, float | None],
    diagnoses: Diagnoses,
    xid_counts: Mapping[tuple[int, int], int],
    max_process_series: int,
    job_label: bool = False,
) -> Iterator[Metric]:
    """Every series under gputop's own names (``gputop_*``), the exporter's state excepted."""
    info = InfoMetricFamily(
        EXPORTER_INFO,
        "The exporter and the driver it reads.",
        labels=["hostname"],
    )
    info.add_metric(
        [hostname],
        {
            "version": __version__,
            "source": snapshot.source,
            "driver_version": snapshot.driver_version or "",
            "cuda_driver_version": snapshot.cuda_driver_version or "",
        },
    )
    yield info
    timestamp = GaugeMetricFamily(
        LAST_SAMPLE_TIMESTAMP, "When the served sample was taken.", labels=["hostname"]
    )
    timestamp.add_metric([hostname], snapshot.timestamp)
    yield timestamp

    yield from _gpu_families(hostname, snapshot, seconds_to_full)
    yield from rollup_families(hostname, snapshot, seconds_to_full, diagnoses)
    yield from diagnosis_families(
        snapshot, diagnoses, xid_counts, lambda gpu: _gpu_labels(hostname, gpu), GPU_LABELS
    )
    yield from process_families(hostname, snapshot, diagnoses, max_process_series, job_label)


def _gpu_labels(hostname: str, gpu: GpuSample) -> list[str]:
    return [hostname, str(gpu.index), gpu.uuid or "", gpu.name or ""]


def _gpu_families(
    hostname: str, snapshot: Snapshot, seconds_to_full: Mapping[int, float | None]
) -> Iterator[Metric]:
    for figure in GPU_FIGURES:
        family = GaugeMetricFamily(figure.name, figure.documentation, labels=GPU_LABELS)
        for gpu in snapshot.gpus:
            value = getattr(gpu, figure.field)
            if value is not None:
                family.add_metric(_gpu_labels(hostname, gpu), figure.export(value))
        yield family
    forecast = GaugeMetricFamily(
        GPU_SECONDS_TO_FULL,
        "Forecast seconds until GPU memory is full at the current growth; absent when no growth is forecast.",
        labels=GPU_LABELS,
    )
    for gpu in snapshot.gpus:
        seconds = seconds_to_full.get(gpu.index)
        if seconds is not None and not gpu.lost and gpu.answering:
            forecast.add_metric(_gpu_labels(hostname, gpu), seconds)
    yield forecast
    lost = GaugeMetricFamily(GPU_LOST, "1 when the GPU has fallen off the bus.", labels=GPU_LABELS)
    for gpu in snapshot.gpus:
        lost.add_metric(_gpu_labels(hostname, gpu), 1.0 if gpu.lost else 0.0)
    yield lost
    answering = GaugeMetricFamily(
        GPU_ANSWERING,
        "0 while a driver call to the GPU has not come back within the deadline (its figures are then left out).",
        labels=GPU_LABELS,
    )
    for gpu in snapshot.gpus:
        answering.add_metric(_gpu_labels(hostname, gpu), 1.0 if gpu.answering else 0.0)
    yield answering


def make_registry(collector: SnapshotCollector) -> CollectorRegistry:
    """A registry holding only gputop's collector (no Python process metrics)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def parse_listen(text: str) -> tuple[str, int]:
    """'HOST:PORT', '[::1]:PORT' or ':PORT' (all addresses) -> (host, port); raises ListenError."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text:
        raise ListenError(f"--listen wants HOST:PORT, not {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ListenError(f"--listen: write an IPv6 address in brackets, like [::1]:9400, not {text!r}")
    try:
        port = int(port_text)
    except ValueError:
        raise ListenError(f"--listen: the port must be a number, not {port_text!r}") from None
    if not 0 <= port <= 65535:
        raise ListenError(f"--listen: the port must be between 0 and 65535, not {port}")
    return host or "0.0.0.0", port


def describe_bind_error(host: str, port: int, error: OSError) -> str:
    """One line saying why the exporter could not listen."""
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    if error.errno == errno.EADDRINUSE:
        return f"cannot listen on {where}: the address is already in use"
    if error.errno == errno.EACCES:
        return f"cannot listen on {where}: permission denied (ports below 1024 need privileges)"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {where}: no such address on this machine"
    if isinstance(error, socket.gaierror):
        return f"cannot listen on {where}: unknown host {host!r}"
    reason = error.strerror or str(error)
    return f"cannot listen on {where}: {reason}"


class Exporter:
    """Samples on its own thread and serves the latest snapshot on ``/metrics``.

    Its forecasts come from the same Watcher as the TUI's, with the settings' thresholds
    (``horizon_s`` included), so both say the same "full in" for a GPU.
    """

    def __init__(
        self,
        sampler: Sampler,
        interval_s: float,
        hostname: str | None = None,
        thresholds: Thresholds | None = None,
        names: str = "both",
        max_process_series: int = DEFAULT_MAX_PROCESS_SERIES,
        web: WebConfig | None = None,
        job_label: bool = False,
    ) -> None:
        self.collector = SnapshotCollector(
            hostname, names=names, max_process_series=max_process_series, job_label=job_label
        )
        self._watcher = Watcher(thresholds)
        self._thread = SamplerThread(sampler, interval_s, self._on_snapshot, self.collector.fail)
        self._web = web or WebConfig()
        self._server: WSGIServer | None = None

    def start(self, host: str, port: int) -> tuple[str, int]:
        """Listen, then start sampling; returns the bound address.

        Raises OSError when it cannot listen, WebConfigError when the TLS certificate cannot be loaded.
        """
        app = exporter_app(make_registry(self.collector), lambda: self.collector.ready, self._web.users)
        self._server, _ = serve(host, port, app, self._web)
        self._thread.start()
        bound = self._server.server_address
        return str(bound[0]), int(bound[1])

    def stop(self) -> None:
        self._thread.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _on_snapshot(self, snapshot: Snapshot) -> None:
        foresight = self._watcher.update(snapshot)
        seconds_to_full = {index: forecast.seconds_to_full for index, forecast in foresight.forecasts.gpus.items()}
        self.collector.update(snapshot, seconds_to_full, foresight.diagnoses)
