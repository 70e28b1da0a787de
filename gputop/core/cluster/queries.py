"""The PromQL the cluster reader sends: per-host summaries, staleness, counts, history, one host's series.

Prometheus does the work: every figure is aggregated per host on the server, and all of
them, tagged with a ``figure`` label, travel in the answer to one instant query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gputop.core import metric_names
from gputop.core.cluster.client import promql_string
from gputop.core.cluster.counts import COUNTS, per_gpu
from gputop.core.cluster.model import Flavour

MIB = 1024 * 1024
FIGURE_LABEL = "figure"
DCGM_FIELDS = ("FB_USED", "FB_FREE", "FB_RESERVED", "GPU_UTIL", "GPU_TEMP", "POWER_USAGE")

Select = Callable[[str], str]  # a metric name -> the selector for it, host matcher included


@dataclass(frozen=True, slots=True)
class FlavourQueries:
    """How one exporter's metrics are named and summed up per host."""

    name: Flavour
    host_label: str
    model_label: str
    gpu_metric: str  # one series per GPU, lost ones included
    memory_used: str  # PromQL over ``%s`` selectors, in bytes
    memory_total: str
    utilization: str  # times utilization_scale: percent
    utilization_scale: int
    temperature: str
    power: str
    sampled: str  # per (host, instance): when the newest figures were taken
    extra_matchers: str = ""  # added to every selector: DCGM's MIG instances are not whole GPUs

    def summaries(self, select: Select) -> dict[str, str]:
        """Each figure per host, by the figure's name."""
        by = f"by ({self.host_label})"
        gpus = select(self.gpu_metric)
        s = _Subscript(select)
        used, total = self.memory_used.format(s=s), self.memory_total.format(s=s)
        by_model = f"by ({self.host_label}, {self.model_label})"
        # GPUs per host and model; gputop's split by its lost flag, so one selection tells all three.
        counted = f'count_values {by_model} ("lost", {gpus})' if self.name == "gputop" else f"count {by_model} ({gpus})"
        figures = {
            "gpus": counted,
            "memory_used": f"sum {by} ({used})",
            "memory_total": f"sum {by} ({total})",
            "memory_percent": f"100 * max {by} (({used}) / ({total}))",
            "utilization": f"{self.utilization_scale} * avg {by} ({self.utilization.format(s=s)})",
            "temperature": f"max {by} ({self.temperature.format(s=s)})",
            "power_draw": f"sum {by} ({self.power.format(s=s)})",
        }
        if self.name == "gputop":
            figures["exporter_up"] = f"min {by} ({select(metric_names.UP)})"
            figures["problems"] = f"sum {by} ({select(metric_names.GPU_PROBLEMS)})"
        return figures

    def selector(self, host_matcher: str) -> Select:
        matchers = ",".join(m for m in (self.extra_matchers, host_matcher) if m)
        return lambda metric: f"{metric}{{{matchers}}}"

    def host_matcher(self, pattern: str | None) -> str:
        return "" if pattern is None else f"{self.host_label}=~{promql_string(pattern)}"


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
    sampled="DCGM_FI_DEV_FB_USED",
    extra_matchers='GPU_I_ID=""',
)
FLAVOURS = (GPUTOP, DCGM)


def tagged(parts: Iterable[tuple[str, str]]) -> str:
    """One expression answering every ``(tag, promql)`` part, each series labelled ``figure=tag``."""
    return " or ".join(
        f'label_replace({promql}, "{FIGURE_LABEL}", {promql_string(tag)}, "", "")' for tag, promql in parts
    )


def hosts_pattern(hostnames: Iterable[str]) -> str:
    """An RE2 pattern matching exactly these hostnames."""
    return "|".join(re.escape(h) for h in sorted(hostnames))


def fleet_queries(hosts: str | None, lookback_s: float, ways: int) -> list[str]:
    """Per-host summaries of both flavours, when each host last sampled, the targets that are down, the counts.

    Split into ``ways`` queries of about equal cost, for Prometheus to evaluate side by side.
    """
    parts: list[tuple[str, str]] = []
    for flavour in FLAVOURS:
        select = flavour.selector(flavour.host_matcher(hosts))
        for figure, promql in flavour.summaries(select).items():
            parts.append((f"{flavour.name}:{figure}", promql))
    gputop_select = GPUTOP.selector(GPUTOP.host_matcher(hosts))
    # The exporter's own sample time, newest within the look-back: it dates a host that went
    # away, and a stuck exporter that still serves its last sample, from one series per host.
    newest = f"last_over_time({gputop_select(GPUTOP.sampled)}[{lookback_s:g}s])"
    parts.append(("gputop:sampled", f"max by (hostname, instance) ({newest})"))
    dcgm_select = DCGM.selector(DCGM.host_matcher(hosts))
    parts.append(("dcgm:sampled", f"max by (Hostname, instance) (timestamp({dcgm_select(DCGM.sampled)}))"))
    parts.append(("down", "up == 0"))
    gputop_hosts, dcgm_hosts = GPUTOP.host_matcher(hosts), DCGM.host_matcher(hosts)
    for count in COUNTS:
        parts.append((f"count:{count.key}", f"count({per_gpu(count, gputop_hosts, dcgm_hosts)})"))
    # gputop's parts come first and cost the most: dealt round the queries like cards.
    return [tagged(parts[start::ways]) for start in range(min(ways, len(parts)))]


def required_names() -> str:
    """A series matcher for the metrics the counts need: which of them exist is asked of the index alone."""
    names = sorted({name for count in COUNTS for name in count.requires})
    return f'{{__name__=~"{"|".join(names)}"}}'


def backfill_query(hostnames: Iterable[str], lookback_s: float) -> str:
    """The summaries of hosts that are gone, from the last figures Prometheus kept of them."""
    pattern = hosts_pattern(hostnames)
    parts: list[tuple[str, str]] = []
    for flavour in FLAVOURS:
        inner = flavour.selector(flavour.host_matcher(pattern))

        def kept(metric: str, inner: Select = inner) -> str:
            return f"last_over_time({inner(metric)}[{lookback_s:g}s])"

        for figure, promql in flavour.summaries(kept).items():
            parts.append((f"{flavour.name}:{figure}", promql))
    return tagged(parts)


def history_query(hostnames: Iterable[str]) -> str:
    """GPU memory in use per host, for these hosts only (a range query)."""
    pattern = hosts_pattern(hostnames)
    gputop = GPUTOP.selector(GPUTOP.host_matcher(pattern))("gputop_gpu_memory_used_bytes")
    dcgm = DCGM.selector(DCGM.host_matcher(pattern))("DCGM_FI_DEV_FB_USED")
    return (
        f"sum by (hostname) ({gputop}) or "
        f'label_replace({MIB} * sum by (Hostname) ({dcgm}), "hostname", "$1", "Hostname", "(.*)")'
    )


def detail_query(hostname: str) -> str:
    """Every gputop series of one host, and DCGM exporter's GPU fields."""
    host = promql_string(hostname)
    dcgm = "|".join(f"DCGM_FI_DEV_{name}" for name in DCGM_FIELDS)
    return f'{{__name__=~"gputop_.+",hostname={host}}} or {{__name__=~"{dcgm}",Hostname={host},GPU_I_ID=""}}'


def kept_detail_query(hostname: str, lookback_s: float) -> str:
    """The last GPU figures Prometheus kept of a host that is gone (no processes: they may be long over)."""
    host = promql_string(hostname)
    return f'last_over_time({{__name__=~"gputop_(gpu|exporter|last|up|sample).*",hostname={host}}}[{lookback_s:g}s])'
