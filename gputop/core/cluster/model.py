"""What the cluster view knows: its options and the hosts, GPUs and processes Prometheus reported."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Literal

from gputop.core.model import percent

DEFAULT_LOOKBACK_S = 900.0
DEFAULT_HISTORY_S = 300.0
# Prometheus' common scrape interval; the staleness rule allows three of them.
TYPICAL_SCRAPE_INTERVAL_S = 15.0

Flavour = Literal["gputop", "dcgm"]


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
    timeout_s: float = 5.0

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
class ClusterGpu:
    """One GPU as Prometheus last saw it. Units: bytes, percent, degrees C, watts, epoch seconds."""

    hostname: str
    index: int
    flavour: Flavour
    uuid: str | None = None
    name: str | None = None
    instance: str | None = None
    memory_total: float | None = None
    memory_used: float | None = None
    memory_free: float | None = None
    utilization_gpu: float | None = None
    utilization_memory: float | None = None
    temperature: float | None = None
    temperature_slowdown: float | None = None
    temperature_shutdown: float | None = None
    power_draw: float | None = None
    power_limit: float | None = None
    fan_speed: float | None = None
    clock_sm: float | None = None
    clock_memory: float | None = None
    seconds_to_full: float | None = None
    lost: bool = False
    last_sample: float | None = None
    stale: bool = False
    # GPU memory in use, one point per step of the history window; None where Prometheus had none.
    memory_history: tuple[float | None, ...] = ()

    @property
    def memory_percent(self) -> float | None:
        return percent(self.memory_used, self.memory_total)


@dataclass(frozen=True, slots=True)
class ClusterProcess:
    """One process on one GPU of one host (from ``gputop_process_gpu_memory_bytes``)."""

    hostname: str
    gpu_index: int
    pid: int
    user: str | None
    command: str | None
    container: str | None
    gpu_memory: float


@dataclass(frozen=True, slots=True)
class ClusterHost:
    """One machine and its GPUs."""

    hostname: str
    gpus: tuple[ClusterGpu, ...]
    stale: bool
    last_sample: float | None
    age_s: float | None
    down: bool = False  # a scrape target of this host reports up == 0

    @property
    def memory_used(self) -> float | None:
        values = [g.memory_used for g in self.gpus if g.memory_used is not None]
        return sum(values) if values else None

    @property
    def memory_total(self) -> float | None:
        values = [g.memory_total for g in self.gpus if g.memory_total is not None]
        return sum(values) if values else None

    @property
    def memory_percent(self) -> float | None:
        """The fullest GPU's memory percent: one full GPU is what stops a job."""
        values = [p for p in (g.memory_percent for g in self.gpus) if p is not None]
        return max(values) if values else None

    @property
    def temperature(self) -> float | None:
        values = [g.temperature for g in self.gpus if g.temperature is not None]
        return max(values) if values else None

    @property
    def utilization(self) -> float | None:
        values = [g.utilization_gpu for g in self.gpus if g.utilization_gpu is not None]
        return sum(values) / len(values) if values else None

    @property
    def power_draw(self) -> float | None:
        values = [g.power_draw for g in self.gpus if g.power_draw is not None]
        return sum(values) if values else None


@dataclass(frozen=True, slots=True)
class ClusterState:
    """One refresh of the whole cluster."""

    url: str
    hosts: tuple[ClusterHost, ...]
    processes_host: str | None = None
    processes: tuple[ClusterProcess, ...] = ()

    def host(self, hostname: str) -> ClusterHost | None:
        return next((h for h in self.hosts if h.hostname == hostname), None)
