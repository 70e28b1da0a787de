"""A cluster's GPUs read from Prometheus: gputop's own metrics and, with fewer fields, DCGM exporter's.

Each refresh asks, at one evaluation time:

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

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gputop.core import metric_names
from gputop.core.cluster.client import Labels, PrometheusClient, promql_string
from gputop.core.cluster.model import ClusterGpu, ClusterHost, ClusterOptions, ClusterProcess, ClusterState, Flavour

HISTORY_POINTS = 60
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    metric: str
    scale: float = 1.0  # Prometheus' unit -> gputop's
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
        *(_Field(f.field, f.name, f.read_back(1.0)) for f in metric_names.GPU_FIGURES),
        _Field("lost", metric_names.GPU_LOST),
        _Field("seconds_to_full", metric_names.GPU_SECONDS_TO_FULL, latest_only=True),
    ),
    presence_metric=metric_names.GPU_LOST,
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
        _Field("utilization_gpu", "DCGM_FI_DEV_GPU_UTIL"),
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
        promql = metric_names.PROCESS_GPU_MEMORY + "{hostname=" + promql_string(hostname) + "}"
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
        memory_free=values.get("memory_free"),
        utilization_gpu=values.get("utilization_gpu"),
        utilization_memory=values.get("utilization_memory"),
        temperature=values.get("temperature"),
        temperature_slowdown=values.get("temperature_slowdown"),
        temperature_shutdown=values.get("temperature_shutdown"),
        power_draw=values.get("power_draw"),
        power_limit=values.get("power_limit"),
        fan_speed=values.get("fan_speed"),
        clock_sm=values.get("clock_sm"),
        clock_memory=values.get("clock_memory"),
        seconds_to_full=values.get("seconds_to_full"),
        lost=values.get("lost") == 1.0,
        last_sample=draft.last_sample,
        stale=down or old,
        memory_history=draft.history,
    )
