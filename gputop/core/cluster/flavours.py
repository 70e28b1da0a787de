"""How each exporter's metrics are named and added up per host: gputop's own and DCGM exporter's.

A ``FlavourQueries`` turns a host matcher into the PromQL of each per-host figure (GPUs, memory,
load, heat) for one exporter; ``GPUTOP`` and ``DCGM`` are the two the cluster reader knows.
DCGM exporter names a host in one of several labels (or none): each of its series is read by the
first it has (``DCGM_HOST_LABELS``). ``queries`` puts these figures together into a refresh.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gputop.core.cluster.client import promql_string
from gputop.core.cluster.model import Flavour
from gputop.core.output import metric_names

MIB = 1024 * 1024
TOTAL_LABEL = "total"
SLOWDOWN_LABEL = "slowdown"

Select = Callable[[str], str]  # a metric name -> the selector for it, host matcher included


@dataclass(frozen=True, slots=True)
class FlavourQueries:
    """How one exporter's metrics are named and summed up per host."""

    name: Flavour
    host_label: str
    model_label: str
    gpu_metric: str  # one series per GPU, lost ones included
    memory_used: str  # PromQL over ``{s[NAME]}`` selectors, in bytes, one series per GPU
    memory_total: str
    utilization: str  # times utilization_scale: percent
    utilization_scale: int
    temperature: str
    power: str
    slowdown: str | None  # its GPUs' slowdown temperature metric; None: not served (core.analysis.levels' default)
    sampled: str  # per (host, instance): when the newest figures were taken
    extra_matchers: str = ""  # added to every selector: DCGM's MIG instances are not whole GPUs

    def selector(self, *matchers: str, wrap: Callable[[str], str] = str) -> Select:
        """A metric name -> its series on the matching hosts; ``wrap`` applies to each plain selector within
        (``last_over_time(…[15m])``, ``timestamp(…)``), which PromQL allows on selectors alone."""
        joined = ",".join(m for m in (self.extra_matchers, *matchers) if m)
        if self.name == "gputop":
            return lambda metric: wrap(f"{metric}{{{joined}}}")
        return lambda metric: _dcgm_series(metric, joined, wrap)

    def host_matcher(self, pattern: str | None, negate: bool = False) -> str:
        if pattern is None:
            return ""
        label = self.host_label if self.name == "gputop" else _HOST
        return f"{label}{'!~' if negate else '=~'}{promql_string(pattern)}"

    def _by(self) -> str:
        return f"by ({self.host_label})"

    def gpus(self, select: Select) -> str:
        """GPUs per host and model; gputop's split by its lost flag, so one selection tells all three."""
        gpus = select(self.gpu_metric)
        by_model = f"by ({self.host_label}, {self.model_label})"
        return f'count_values {by_model} ("lost", {gpus})' if self.name == "gputop" else f"count {by_model} ({gpus})"

    def used(self, select: Select, how: str = "sum") -> str:
        return f"{how} {self._by()} ({self.memory_used.format(s=_Subscript(select))})"

    def fullest_percent(self, select: Select) -> str:
        """The fullest GPU's memory, in percent: a ratio per GPU (for hosts whose GPUs differ in size)."""
        s = _Subscript(select)
        return f"100 * max {self._by()} (({self.memory_used.format(s=s)}) / ({self.memory_total.format(s=s)}))"

    def total(self, select: Select) -> str:
        return f"sum {self._by()} ({self.memory_total.format(s=_Subscript(select))})"

    def sizes(self, select: Select) -> str:
        """How many GPUs of each memory size per host (label ``total``): the host's total and whether they differ."""
        return f'count_values {self._by()} ("{TOTAL_LABEL}", {self.memory_total.format(s=_Subscript(select))})'

    def slowdowns(self, select: Select) -> str | None:
        if self.slowdown is None:
            return None
        return f'count_values {self._by()} ("{SLOWDOWN_LABEL}", {select(self.slowdown)})'

    def load(self, select: Select) -> dict[str, str]:
        s = _Subscript(select)
        return {
            "utilization": f"{self.utilization_scale} * avg {self._by()} ({self.utilization.format(s=s)})",
            "power_draw": f"sum {self._by()} ({self.power.format(s=s)})",
        }

    def hottest(self, select: Select) -> str:
        return f"max {self._by()} ({self.temperature.format(s=_Subscript(select))})"

    def summaries(self, select: Select) -> dict[str, str]:
        """Each figure per host, by the figure's name, all read from the series (for hosts seen only once)."""
        figures = {
            "gpus": self.gpus(select),
            "memory_used": self.used(select),
            "memory_total": self.total(select),
            "memory_percent": self.fullest_percent(select),
            **self.load(select),
            "temperature": self.hottest(select),
        }
        if self.name == "gputop":
            figures["exporter_up"] = f"min {self._by()} ({select(metric_names.UP)})"
            figures["problems"] = f"sum {self._by()} ({select(metric_names.GPU_PROBLEMS)})"
        return figures


# dcgm-exporter names a host in the ``Hostname`` label (4.x), ``hostname`` (main after #655), or not at all
# (``--no-hostname``: its ``instance`` is all there is). A DCGM host matcher names the label ``_HOST``;
# each series is read by the first of these it has, and carried on as ``Hostname``.
_HOST = "__host__"
DCGM_HOST_LABELS = ("Hostname", "hostname", "instance")
# Kubernetes' per-pod series (``--kubernetes-virtual-gpus``: one per pod on a time-shared GPU) repeat
# their GPU's figures; a scrape without ``honor_labels`` renames the pod's labels ``exported_*``.
POD_LABELS = ("pod", "namespace", "container", "pod_uid", "vgpu")
_PER_POD = ", ".join((*POD_LABELS, *(f"exported_{label}" for label in POD_LABELS)))


def _dcgm_series(metric: str, matchers: str, wrap: Callable[[str], str]) -> str:
    """DCGM's series of ``metric``, one per GPU, each with its host in ``Hostname`` whichever label named it."""
    parts = []
    for n, label in enumerate(DCGM_HOST_LABELS):
        unnamed = [f'{earlier}=""' for earlier in DCGM_HOST_LABELS[:n]]
        named = (matchers.replace(_HOST, label), *unnamed, f'{label}!=""')
        selector = wrap(f"{metric}{{{','.join(m for m in named if m)}}}")
        if n:
            selector = f'label_replace({selector}, "Hostname", "$1", "{label}", "(.*)")'
        parts.append(selector)
    return f"max without ({_PER_POD}) ({' or '.join(parts)})"


_DCGM_TOTAL = (
    "({s[DCGM_FI_DEV_FB_USED]} + {s[DCGM_FI_DEV_FB_FREE]}"
    " + ({s[DCGM_FI_DEV_FB_RESERVED]} or {s[DCGM_FI_DEV_FB_USED]} * 0))"
)


class _Subscript:
    """``{s[NAME]}`` in a template: the selector for NAME."""

    def __init__(self, select: Select) -> None:
        self._select = select

    def __getitem__(self, metric: str) -> str:
        return self._select(metric)


GPUTOP = FlavourQueries(
    name="gputop",
    host_label=metric_names.HOSTNAME_LABEL,
    model_label="name",
    gpu_metric=metric_names.GPU_LOST,
    memory_used="{s[gputop_gpu_memory_used_bytes]}",
    memory_total="{s[gputop_gpu_memory_total_bytes]}",
    utilization="{s[gputop_gpu_utilization_ratio]}",
    utilization_scale=100,
    temperature="{s[gputop_gpu_temperature_celsius]}",
    power="{s[gputop_gpu_power_watts]}",
    slowdown="gputop_gpu_temperature_slowdown_celsius",
    sampled=metric_names.LAST_SAMPLE_TIMESTAMP,
)
DCGM = FlavourQueries(
    name="dcgm",
    host_label="Hostname",
    model_label="modelName",
    gpu_metric="DCGM_FI_DEV_FB_USED",
    memory_used=f"{MIB} * {{s[DCGM_FI_DEV_FB_USED]}}",
    memory_total=f"{MIB} * {_DCGM_TOTAL}",
    utilization="{s[DCGM_FI_DEV_GPU_UTIL]}",
    utilization_scale=1,
    temperature="{s[DCGM_FI_DEV_GPU_TEMP]}",
    power="{s[DCGM_FI_DEV_POWER_USAGE]}",
    slowdown=None,
    sampled="DCGM_FI_DEV_FB_USED",
    extra_matchers=metric_names.DCGM_OWN_SERIES,
)
FLAVOURS = (GPUTOP, DCGM)
FLAVOUR_BY_NAME: Mapping[str, FlavourQueries] = {flavour.name: flavour for flavour in FLAVOURS}
