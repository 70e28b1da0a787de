"""A cluster's GPUs read from Prometheus: gputop's own metrics and, with fewer fields, DCGM exporter's.

Only the HTTP API is used (``/api/v1/query`` and ``/api/v1/query_range``),
through ``urllib``. Each refresh asks, at one evaluation time:

* the latest value of each GPU figure within ``lookback_s``
  (``last_over_time(...)``), so a host that stopped answering keeps its last
  figures on screen, marked stale, instead of vanishing;
* the time of each GPU's newest sample (``timestamp()`` now, or the newest
  within the look-back through a subquery when the series has gone stale);
* ``up`` of every scrape target, joined to hosts through ``instance``;
* GPU memory over ``history_s`` for the sparklines (a range query);
* the processes of one host, when the UI shows that host.

A GPU is stale when its target's ``up`` is 0 or its newest sample is older
than ``stale_after_s``; a host is stale when all its GPUs are.
"""

from __future__ import annotations

import json
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gputop.core.model import percent

DEFAULT_LOOKBACK_S = 900.0
DEFAULT_HISTORY_S = 300.0
HISTORY_POINTS = 60
# Prometheus' common scrape interval; the staleness rule allows three of them.
TYPICAL_SCRAPE_INTERVAL_S = 15.0
MIB = 1024 * 1024

Labels = Mapping[str, str]
Flavour = Literal["gputop", "dcgm"]


class ConfigError(ValueError):
    """Options the cluster view cannot work with; the message is one line."""


class PrometheusError(Exception):
    """Prometheus could not answer; ``unreachable`` tells a dead link from a refused query."""

    def __init__(self, message: str, unreachable: bool) -> None:
        super().__init__(message)
        self.unreachable = unreachable


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
    utilization: float | None = None
    temperature: float | None = None
    power_draw: float | None = None
    power_limit: float | None = None
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
        values = [g.utilization for g in self.gpus if g.utilization is not None]
        return sum(values) / len(values) if values else None

    @property
    def power_draw(self) -> float | None:
        values = [g.power_draw for g in self.gpus if g.power_draw is not None]
        return sum(values) if values else None


@dataclass(frozen=True, slots=True)
class ClusterState:
    """One refresh of the whole cluster."""

    url: str
    fetched_at: float
    hosts: tuple[ClusterHost, ...]
    processes_host: str | None = None
    processes: tuple[ClusterProcess, ...] = ()

    def host(self, hostname: str) -> ClusterHost | None:
        return next((h for h in self.hosts if h.hostname == hostname), None)


@dataclass(frozen=True, slots=True)
class Sample:
    """One series of an instant query."""

    labels: Labels
    timestamp: float
    value: float


@dataclass(frozen=True, slots=True)
class RangeSeries:
    """One series of a range query."""

    labels: Labels
    points: tuple[tuple[float, float], ...]


Opener = Callable[..., Any]


class PrometheusClient:
    """The two query endpoints of the Prometheus HTTP API."""

    def __init__(self, url: str, timeout_s: float = 5.0, opener: Opener = urllib.request.urlopen) -> None:
        self.url = url.rstrip("/")
        self._timeout_s = timeout_s
        self._open = opener

    def query(self, promql: str, at: float) -> list[Sample]:
        data = self._call("query", {"query": promql, "time": _api_time(at)})
        if data.get("resultType") != "vector":
            raise PrometheusError(f"expected a vector from {promql!r}, got {data.get('resultType')!r}", False)
        return [
            Sample(_labels(item), float(item["value"][0]), _api_float(item["value"][1]))
            for item in data.get("result", [])
        ]

    def query_range(self, promql: str, start: float, end: float, step_s: float) -> list[RangeSeries]:
        params = {"query": promql, "start": _api_time(start), "end": _api_time(end), "step": f"{step_s:g}"}
        data = self._call("query_range", params)
        if data.get("resultType") != "matrix":
            raise PrometheusError(f"expected a matrix from {promql!r}, got {data.get('resultType')!r}", False)
        return [
            RangeSeries(_labels(item), tuple((float(t), _api_float(v)) for t, v in item.get("values", [])))
            for item in data.get("result", [])
        ]

    def _call(self, endpoint: str, params: Mapping[str, str]) -> dict[str, Any]:
        body = urllib.parse.urlencode(params).encode()
        request = urllib.request.Request(
            f"{self.url}/api/v1/{endpoint}",
            data=body,
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        )
        try:
            with self._open(request, timeout=self._timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise _http_error(error) from None
        except urllib.error.URLError as error:
            raise PrometheusError(_reason(error.reason), True) from None
        except TimeoutError:
            raise PrometheusError(f"no answer within {self._timeout_s:g}s", True) from None
        except OSError as error:
            raise PrometheusError(_reason(error), True) from None
        document = _decode(raw)
        if document is None or document.get("status") != "success" or not isinstance(document.get("data"), dict):
            raise PrometheusError("the answer is not from a Prometheus query API", True)
        data: dict[str, Any] = document["data"]
        return data


def _reason(error: object) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    return str(error)


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return document if isinstance(document, dict) else None


def _http_error(error: urllib.error.HTTPError) -> PrometheusError:
    try:
        document = _decode(error.read())
    except OSError:
        document = None
    if document is not None and document.get("status") == "error":
        kind = document.get("errorType", "error")
        return PrometheusError(f"{kind}: {document.get('error', '')}".strip(), False)
    return PrometheusError(f"HTTP {error.code} {error.reason}", True)


def _api_time(at: float) -> str:
    return f"{at:.3f}"


def _api_float(text: Any) -> float:
    return float(text)


def _labels(item: Mapping[str, Any]) -> dict[str, str]:
    metric = item.get("metric", {})
    return {str(k): str(v) for k, v in metric.items()}


def promql_string(text: str) -> str:
    """A PromQL double-quoted string literal holding exactly ``text``."""
    # JSON's escapes (\\, \", \n, \uXXXX) are all Go escapes, which PromQL strings use.
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    metric: str
    scale: float = 1.0
    latest_only: bool = False  # a series that may rightly vanish: its last value must not linger


@dataclass(frozen=True, slots=True)
class _Flavour:
    name: Flavour
    host_label: str
    uuid_label: str
    model_label: str
    fields: tuple[_Field, ...]
    presence_metric: str  # exported for every GPU, lost ones included: its timestamps date the GPU
    history: _Field
    skip_labels: tuple[str, ...] = ()  # series carrying one of these are not whole GPUs


_GPUTOP = _Flavour(
    name="gputop",
    host_label="hostname",
    uuid_label="uuid",
    model_label="name",
    fields=(
        _Field("memory_total", "gputop_gpu_memory_total_bytes"),
        _Field("memory_used", "gputop_gpu_memory_used_bytes"),
        _Field("utilization", "gputop_gpu_utilization_ratio", 100.0),
        _Field("temperature", "gputop_gpu_temperature_celsius"),
        _Field("power_draw", "gputop_gpu_power_watts"),
        _Field("power_limit", "gputop_gpu_power_limit_watts"),
        _Field("lost", "gputop_gpu_lost"),
        _Field("seconds_to_full", "gputop_gpu_seconds_to_full", latest_only=True),
    ),
    presence_metric="gputop_gpu_lost",
    history=_Field("memory_used", "gputop_gpu_memory_used_bytes"),
)
_DCGM = _Flavour(
    name="dcgm",
    host_label="Hostname",
    uuid_label="UUID",
    model_label="modelName",
    fields=(
        _Field("memory_used", "DCGM_FI_DEV_FB_USED", MIB),
        _Field("memory_free", "DCGM_FI_DEV_FB_FREE", MIB),
        _Field("memory_reserved", "DCGM_FI_DEV_FB_RESERVED", MIB),
        _Field("utilization", "DCGM_FI_DEV_GPU_UTIL"),
        _Field("temperature", "DCGM_FI_DEV_GPU_TEMP"),
        _Field("power_draw", "DCGM_FI_DEV_POWER_USAGE"),
    ),
    presence_metric="DCGM_FI_DEV_FB_USED",
    history=_Field("memory_used", "DCGM_FI_DEV_FB_USED", MIB),
    # MIG instances are reported per GPU instance under the same gpu label.
    skip_labels=("GPU_I_ID",),
)
FLAVOURS = (_GPUTOP, _DCGM)

_GpuKey = tuple[str, int]


@dataclass(slots=True)
class _GpuDraft:
    hostname: str
    index: int
    flavour: Flavour
    uuid: str | None = None
    name: str | None = None
    instance: str | None = None
    values: dict[str, float] = field(default_factory=dict)
    last_sample: float | None = None
    history: tuple[float | None, ...] = ()


class ClusterReader:
    """Turns Prometheus answers into a ClusterState. Blocking: call it from a worker thread."""

    def __init__(
        self,
        options: ClusterOptions,
        client: PrometheusClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.options = options
        self.client = client or PrometheusClient(options.url, options.timeout_s)
        self._clock = clock

    def fetch(self, processes_for: str | None = None) -> ClusterState:
        """One refresh; ``processes_for`` names the host whose processes are wanted. Raises PrometheusError."""
        now = self._clock()
        drafts: dict[_GpuKey, _GpuDraft] = {}
        for flavour in FLAVOURS:
            found = self._read_flavour(flavour, now)
            for key, draft in found.items():
                # gputop's own figures are the fuller ones: they win over DCGM's for the same GPU.
                drafts.setdefault(key, draft)
        up = self._read_up(now)
        hosts = self._hosts(drafts, up, now)
        processes: tuple[ClusterProcess, ...] = ()
        if processes_for is not None:
            processes = self._read_processes(processes_for, now)
        return ClusterState(
            url=self.options.url,
            fetched_at=now,
            hosts=hosts,
            processes_host=processes_for,
            processes=processes,
        )

    def _selector(self, flavour: _Flavour) -> str:
        if self.options.hosts is None:
            return ""
        return "{" + f"{flavour.host_label}=~{promql_string(self.options.hosts)}" + "}"

    def _read_flavour(self, flavour: _Flavour, now: float) -> dict[_GpuKey, _GpuDraft]:
        selector = self._selector(flavour)
        lookback = f"[{self.options.lookback_s:g}s]"
        drafts: dict[_GpuKey, _GpuDraft] = {}
        presence = f"{flavour.presence_metric}{selector}"
        step = f"{max(1.0, min(self.options.interval_s, 5.0)):g}s"
        dated = self.client.query(
            f"timestamp({presence}) or max_over_time(timestamp({presence})[{self.options.lookback_s:g}s:{step}])", now
        )
        for sample in dated:
            draft = self._draft(flavour, sample.labels)
            if draft is not None:
                key = (draft.hostname, draft.index)
                if key in drafts:
                    previous = drafts[key].last_sample or 0.0
                    drafts[key].last_sample = max(previous, sample.value)
                else:
                    draft.last_sample = sample.value
                    drafts[key] = draft
        if not drafts:
            return drafts
        for item in flavour.fields:
            metric = f"{item.metric}{selector}"
            promql = metric if item.latest_only else f"last_over_time({metric}{lookback})"
            for sample in self.client.query(promql, now):
                key_draft = self._draft(flavour, sample.labels)
                if key_draft is None or math.isnan(sample.value):
                    continue
                target = drafts.get((key_draft.hostname, key_draft.index))
                if target is not None:
                    target.values[item.name] = sample.value * item.scale
        self._read_history(flavour, selector, drafts, now)
        return drafts

    def _read_history(self, flavour: _Flavour, selector: str, drafts: dict[_GpuKey, _GpuDraft], now: float) -> None:
        step = self.options.history_s / HISTORY_POINTS
        # Steps on whole multiples of the step keep the sparkline from shimmering between refreshes.
        end = now - now % step
        start = end - step * HISTORY_POINTS
        promql = f"{flavour.history.metric}{selector}"
        if flavour.history.scale != 1.0:
            promql = f"{promql} * {flavour.history.scale!r}"
        for series in self.client.query_range(promql, start, end, step):
            key_draft = self._draft(flavour, series.labels)
            if key_draft is None:
                continue
            target = drafts.get((key_draft.hostname, key_draft.index))
            if target is None:
                continue
            by_slot = {round((t - start) / step): v for t, v in series.points if not math.isnan(v)}
            target.history = tuple(by_slot.get(slot) for slot in range(HISTORY_POINTS + 1))

    def _draft(self, flavour: _Flavour, labels: Labels) -> _GpuDraft | None:
        if any(name in labels for name in flavour.skip_labels):
            return None
        try:
            index = int(labels.get("gpu", ""))
        except ValueError:
            return None
        instance = labels.get("instance") or None
        hostname = labels.get(flavour.host_label) or instance
        if not hostname:
            return None
        return _GpuDraft(
            hostname=hostname,
            index=index,
            flavour=flavour.name,
            uuid=labels.get(flavour.uuid_label) or None,
            name=labels.get(flavour.model_label) or None,
            instance=instance,
        )

    def _read_up(self, now: float) -> dict[str, bool]:
        return {s.labels["instance"]: s.value == 1.0 for s in self.client.query("up", now) if "instance" in s.labels}

    def _hosts(
        self, drafts: Mapping[_GpuKey, _GpuDraft], up: Mapping[str, bool], now: float
    ) -> tuple[ClusterHost, ...]:
        by_host: dict[str, list[ClusterGpu]] = {}
        down_hosts: set[str] = set()
        for draft in drafts.values():
            down = draft.instance is not None and up.get(draft.instance) is False
            if down:
                down_hosts.add(draft.hostname)
            gpu = _finish(draft, now, self.options.stale_after_s, down)
            by_host.setdefault(draft.hostname, []).append(gpu)
        hosts = []
        for hostname in sorted(by_host):
            gpus = tuple(sorted(by_host[hostname], key=lambda g: g.index))
            times = [g.last_sample for g in gpus if g.last_sample is not None]
            last_sample = max(times) if times else None
            hosts.append(
                ClusterHost(
                    hostname=hostname,
                    gpus=gpus,
                    stale=all(g.stale for g in gpus),
                    last_sample=last_sample,
                    age_s=None if last_sample is None else max(0.0, now - last_sample),
                    down=hostname in down_hosts,
                )
            )
        return tuple(hosts)

    def _read_processes(self, hostname: str, now: float) -> tuple[ClusterProcess, ...]:
        promql = "gputop_process_gpu_memory_bytes{hostname=" + promql_string(hostname) + "}"
        processes = []
        for sample in self.client.query(promql, now):
            labels = sample.labels
            try:
                gpu_index, pid = int(labels.get("gpu", "")), int(labels.get("pid", ""))
            except ValueError:
                continue
            processes.append(
                ClusterProcess(
                    hostname=hostname,
                    gpu_index=gpu_index,
                    pid=pid,
                    user=labels.get("user") or None,
                    command=labels.get("command") or None,
                    container=labels.get("container") or None,
                    gpu_memory=sample.value,
                )
            )
        return tuple(sorted(processes, key=lambda p: (p.gpu_index, -p.gpu_memory, p.pid)))


def _finish(draft: _GpuDraft, now: float, stale_after_s: float, down: bool) -> ClusterGpu:
    values = draft.values
    memory_total = values.get("memory_total")
    if memory_total is None and "memory_used" in values and "memory_free" in values:
        memory_total = values["memory_used"] + values["memory_free"] + values.get("memory_reserved", 0.0)
    old = draft.last_sample is None or now - draft.last_sample > stale_after_s
    return ClusterGpu(
        hostname=draft.hostname,
        index=draft.index,
        flavour=draft.flavour,
        uuid=draft.uuid,
        name=draft.name,
        instance=draft.instance,
        memory_total=memory_total,
        memory_used=values.get("memory_used"),
        utilization=values.get("utilization"),
        temperature=values.get("temperature"),
        power_draw=values.get("power_draw"),
        power_limit=values.get("power_limit"),
        seconds_to_full=values.get("seconds_to_full"),
        lost=values.get("lost") == 1.0,
        last_sample=draft.last_sample,
        stale=down or old,
        memory_history=draft.history,
    )

