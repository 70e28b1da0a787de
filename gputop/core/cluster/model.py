"""What the cluster view knows: its options, a summary row per host, one host's GPUs and processes."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from gputop.core.model import percent

DEFAULT_LOOKBACK_S = 900.0
DEFAULT_HISTORY_S = 300.0
# Prometheus' common scrape interval; the staleness rule allows three of them.
TYPICAL_SCRAPE_INTERVAL_S = 15.0
# A query may take this share of the interval before it is given up as too slow.
MIN_TIMEOUT_S = 2.0

Flavour = Literal["gputop", "dcgm"]
# live: figures are fresh; stale: the exporter answers but its newest sample is old or failed;
# down: Prometheus cannot scrape it (``up`` is 0).
HostState = Literal["live", "stale", "down"]


class ConfigError(ValueError):
    """Options the cluster view cannot work with; the message is one line."""


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """Where to look and how often."""

    url: str
    hosts: str | None = None
    interval_s: float = 5.0
    stale_after_s: float = 3 * TYPICAL_SCRAPE_INTERVAL_S
    lookback_s: float = DEFAULT_LOOKBACK_S
    history_s: float = DEFAULT_HISTORY_S

    @property
    def timeout_s(self) -> float:
        """How long one refresh may wait for Prometheus: the interval, at least MIN_TIMEOUT_S."""
        return max(MIN_TIMEOUT_S, self.interval_s)

    @classmethod
    def create(
        cls,
        url: str,
        hosts: str | None = None,
        interval_s: float = 5.0,
        stale_after_s: float | None = None,
    ) -> ClusterOptions:
        """Checked options; raises ConfigError. ``stale_after_s`` defaults to 3 x max(interval, 15 s)."""
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ConfigError(f"--prometheus wants an http:// or https:// URL, not {url!r}")
        if hosts is not None:
            try:
                re.compile(hosts)
            except re.error as error:
                raise ConfigError(f"--hosts: not a regular expression: {error}") from None
        if stale_after_s is None:
            stale_after_s = 3 * max(interval_s, TYPICAL_SCRAPE_INTERVAL_S)
        return cls(url=url.rstrip("/"), hosts=hosts, interval_s=interval_s, stale_after_s=stale_after_s)


@dataclass(frozen=True, slots=True)
class ClusterHost:
    """One machine as one row: its GPUs summed up by Prometheus. Units: bytes, percent, °C, W, epoch s."""

    hostname: str
    flavour: Flavour
    state: HostState
    gpus: int | None = None
    lost: int = 0
    model: str | None = None  # the GPU model, '…' appended when the host mixes models
    memory_used: float | None = None  # all GPUs together
    memory_total: float | None = None
    memory_percent: float | None = None  # the fullest GPU: one full GPU is what stops a job
    utilization: float | None = None  # the mean over its GPUs
    temperature: float | None = None  # the hottest GPU
    power_draw: float | None = None  # all GPUs together
    problems: int | None = None  # what the diagnoses found on its GPUs; None: its exporter does not say
    last_sample: float | None = None  # when its newest figures were taken
    instance: str | None = None  # its scrape target

    def age_s(self, now: float) -> float | None:
        return None if self.last_sample is None else max(0.0, now - self.last_sample)


@dataclass(frozen=True, slots=True)
class ClusterGpu:
    """One GPU of the open host: every figure of ``metric_names.GPU_FIGURES`` it serves, by ``GpuSample`` field."""

    index: int
    uuid: str | None = None
    name: str | None = None
    figures: Mapping[str, float] = field(default_factory=dict)
    seconds_to_full: float | None = None
    lost: bool = False
    answering: bool | None = None  # False while a driver call to it has not come back in time
    problems: Mapping[str, int] = field(default_factory=dict)  # kind -> how many (metric_names.PROBLEM_KINDS)
    # A MIG device of GPU ``index`` (DCGM's GPU_I_ID and GPU_I_PROFILE); None for the GPU itself.
    mig_instance: int | None = None
    mig_profile: str | None = None
    verdict: str | None = None  # gputop_gpu_verdict: throttled, stalled, busy_few_sms, memory_bound

    def figure(self, name: str) -> float | None:
        return self.figures.get(name)

    @property
    def memory_percent(self) -> float | None:
        return percent(self.figures.get("memory_used"), self.figures.get("memory_total"))


@dataclass(frozen=True, slots=True)
class ClusterProcess:
    """One process on one GPU of one host (``gputop_process_gpu_memory_bytes``), or a Kubernetes pod on a
    GPU of a DCGM host (its per-pod series: no PID, and no memory of its own)."""

    hostname: str
    gpu_index: int
    pid: int | None
    user: str | None
    command: str | None
    container: str | None
    gpu_memory: float | None


@dataclass(frozen=True, slots=True)
class HostDetail:
    """The open host: its exporter, GPUs and processes, read when its screen is open."""

    hostname: str
    live: bool  # False: the figures are the last Prometheus kept, and no process is shown
    gpus: tuple[ClusterGpu, ...] = ()
    processes: tuple[ClusterProcess, ...] = ()
    exporter_up: bool | None = None  # gputop_up: its latest sample succeeded
    sample_errors: float | None = None
    last_sample: float | None = None
    info: Mapping[str, str] = field(default_factory=dict)  # version, source, driver_version, …
    process_series_dropped: float | None = None  # processes the exporter's --max-process-series left out


@dataclass(frozen=True, slots=True)
class CountValue:
    """One count of the fleet summary; ``value`` None when the metrics it needs are not exported anywhere."""

    key: str
    label: str
    value: int | None


@dataclass(frozen=True, slots=True)
class ClusterState:
    """One refresh of the whole cluster."""

    url: str
    at: float  # Prometheus' evaluation time
    duration_s: float  # how long Prometheus took to answer all of it
    hosts: tuple[ClusterHost, ...]  # by hostname
    counts: tuple[CountValue, ...] = ()
    # GPU memory in use on each host on screen, one point per step of the history window.
    history: Mapping[str, tuple[float | None, ...]] = field(default_factory=dict)
    detail: HostDetail | None = None
    # While a first refresh comes in: the host figures (ClusterHost's field names) and counts
    # (``count:KEY``) not answered yet. Empty once the whole refresh is in.
    pending: frozenset[str] = frozenset()

    def host(self, hostname: str) -> ClusterHost | None:
        return next((h for h in self.hosts if h.hostname == hostname), None)


@dataclass(frozen=True, slots=True)
class GpuFinding:
    """One GPU of a count's list, with the figure that put it there."""

    hostname: str
    index: int
    value: float


# Given what a refresh has read so far, each time one of its queries answers.
Partial = Callable[[ClusterState], None]
