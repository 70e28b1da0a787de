"""The PromQL the cluster reader sends: per-host summaries, staleness, counts, history, one host's series.

Prometheus does the work: every figure is aggregated per host on the server, or read from
what the host's exporter already adds up (``core.output.host_rollup``: one series a host). A refresh
is a few instant queries, each answering a group of figures (tagged with a ``figure`` label)
for every host, sent side by side: the hosts themselves first (cheap, so rows show at once),
then memory, load, heat, problems and the counts. What a host's GPUs are (their memory sizes
and slowdown temperatures, and whether its exporter serves host series) does not change
while it runs, so it is asked once a minute (``fixed_query``) rather than read again with
every refresh: for a host read GPU by GPU, the fullest GPU is then its most memory in use
over its GPUs' size, and a hot GPU one above its host's threshold, each from one metric
rather than a ratio of two. How each exporter names its metrics is ``flavours``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from gputop.core.analysis.levels import DEFAULT_SLOWDOWN_C, TEMPERATURE_ALARM_MARGIN_C
from gputop.core.cluster.client import promql_string
from gputop.core.cluster.counts import COUNT_BY_KEY, COUNTS, HOT, hot_gpus, per_gpu
from gputop.core.cluster.flavours import DCGM, DCGM_HOST_LABELS, FLAVOURS, GPUTOP, MIB, FlavourQueries
from gputop.core.cluster.model import Flavour
from gputop.core.cluster.rollup import ROLLUP_FIGURE, flagged_count, rollup_figures, rollup_presence
from gputop.core.output import metric_names

FIGURE_LABEL = "figure"


@dataclass(frozen=True, slots=True)
class Fixed:
    """What a host's GPUs are, asked once a minute: memory sizes and slowdown temperatures."""

    flavour: Flavour
    memory_total: float  # all its GPUs together, bytes
    gpu_memory_total: float | None  # every GPU's size, when all are the same (None: they differ)
    slowdown: float | None  # every GPU's slowdown temperature, °C (core.analysis.levels' default where none is given)
    # None: they differ
    rollup: bool = False  # its exporter serves what its GPUs add up to (core.output.host_rollup)


@dataclass(frozen=True, slots=True)
class Query:
    """One instant query of a refresh: a group of figures for every host."""

    group: str
    promql: str


# The groups of a refresh and the host figures (ClusterHost's fields) each one answers.
GROUP_FIGURES: Mapping[str, frozenset[str]] = {
    "hosts": frozenset(("gpus", "model", "lost")),
    "memory": frozenset(("memory_used", "memory_total", "memory_percent")),
    "load": frozenset(("utilization", "power_draw")),
    "heat": frozenset(("temperature",)),
    "problems": frozenset(("problems",)),  # five series a GPU, one per kind: the costliest figure
    "counts": frozenset(),
}


def count_group(key: str) -> str:
    """The group of a refresh that answers a count."""
    if key == HOT.key:
        return "heat"
    return "hosts" if COUNT_BY_KEY[key].from_hosts else "counts"


def tagged(parts: Iterable[tuple[str, str]]) -> str:
    """One expression answering every ``(tag, promql)`` part, each series labelled ``figure=tag``."""
    return " or ".join(
        f'label_replace({promql}, "{FIGURE_LABEL}", {promql_string(tag)}, "", "")' for tag, promql in parts
    )


def hosts_pattern(hostnames: Iterable[str]) -> str:
    """An RE2 pattern matching exactly these hostnames."""
    return "|".join(re.escape(h) for h in sorted(hostnames))


def refresh_queries(hosts: str | None, lookback_s: float, fixed: Mapping[str, Fixed]) -> list[Query]:
    """Every host's summary in groups, the targets that are down, the fleet's counts.

    ``fixed``: what each host's GPUs are, from the last ``fixed_query`` (empty before the first
    answer). Hosts whose exporter serves what its GPUs add up to (``core.output.host_rollup``) are read
    from those series, one a host; the others (DCGM exporter's, and gputop's from before it
    served them, which ``fixed`` names) from their GPUs' series: those whose GPUs differ in size
    get their fullest GPU as a ratio per GPU, the others from their memory in use alone, and the
    hot count compares each GPU with its host's threshold.
    """
    groups: dict[str, list[tuple[str, str]]] = {name: [] for name in GROUP_FIGURES}
    legacy = gpu_by_gpu(fixed)
    only = GPUTOP.host_matcher(hosts_pattern(legacy)) if legacy else ""
    for flavour in FLAVOURS:
        if flavour is GPUTOP and not legacy:
            continue
        select = flavour.selector(flavour.host_matcher(hosts), only if flavour is GPUTOP else "")
        tag = flavour.name
        groups["hosts"].append((f"{tag}:gpus", flavour.gpus(select)))
        groups["memory"].append((f"{tag}:memory_used", flavour.used(select)))
        groups["memory"].append((f"{tag}:memory_max", flavour.used(select, "max")))
        if mixed := _mixed_sizes(flavour, fixed):
            # Their GPUs differ in size within a host: the ratio, for those hosts only.
            ratio_select = flavour.selector(flavour.host_matcher(hosts), mixed)
            groups["memory"].append((f"{tag}:memory_percent", flavour.fullest_percent(ratio_select)))
        groups["load"].extend((f"{tag}:{figure}", promql) for figure, promql in flavour.load(select).items())
        groups["heat"].append((f"{tag}:temperature", flavour.hottest(select)))
    gputop = GPUTOP.selector(GPUTOP.host_matcher(hosts))
    groups["hosts"].append(("gputop:exporter_up", f"min by (hostname) ({gputop(metric_names.UP)})"))
    # The exporter's own sample time, newest within the look-back: it dates a host that went
    # away, and a stuck exporter that still serves its last sample, from one series per host.
    newest = f"last_over_time({gputop(GPUTOP.sampled)}[{lookback_s:g}s])"
    groups["hosts"].append(("gputop:sampled", f"max by (hostname, instance) ({newest})"))
    dcgm = DCGM.selector(DCGM.host_matcher(hosts), wrap=lambda selector: f"timestamp({selector})")
    groups["hosts"].append(("dcgm:sampled", f"max by (Hostname, instance) ({dcgm(DCGM.sampled)})"))
    groups["hosts"].append(("down", "up == 0"))
    if legacy:
        gputop_hosts = ",".join(m for m in (GPUTOP.host_matcher(hosts), only) if m)
        problems = f"sum by (hostname) ({GPUTOP.selector(gputop_hosts)(metric_names.GPU_PROBLEMS)})"
        groups["problems"].append(("gputop:problems", problems))
        for count in COUNTS:
            if not count.from_hosts and count is not HOT:
                promql = f"count({per_gpu(count, gputop_hosts, DCGM.selector(DCGM.host_matcher(hosts)))})"
                groups[count_group(count.key)].append((f"count:{count.key}#gpus", promql))
    groups["heat"].extend(_hot_by_threshold(hosts, fixed, only))
    # Every other gputop host from its own series (a host is read one way only, so it is counted once).
    others = GPUTOP.host_matcher(hosts_pattern(legacy), negate=True) if legacy else ""
    matchers = (GPUTOP.host_matcher(hosts), others)
    for group, parts in rollup_figures(*matchers).items():
        groups[group].extend(parts)
    for count in COUNTS:
        if not count.from_hosts:
            promql = flagged_count(count.label, *matchers)
            groups[count_group(count.key)].append((f"count:{count.key}#hosts", promql))
    return [Query(name, tagged(parts)) for name, parts in groups.items()]


def fixed_query(hosts: str | None) -> Query:
    """How many GPUs of each memory size and slowdown temperature each host has, and which serve host series."""
    parts = []
    for flavour in FLAVOURS:
        select = flavour.selector(flavour.host_matcher(hosts))
        parts.append((f"{flavour.name}:sizes", flavour.sizes(select)))
        if (slowdowns := flavour.slowdowns(select)) is not None:
            parts.append((f"{flavour.name}:slowdowns", slowdowns))
    parts.append((f"{GPUTOP.name}:{ROLLUP_FIGURE}", rollup_presence(GPUTOP.host_matcher(hosts))))
    return Query("fixed", tagged(parts))


def gpu_by_gpu(fixed: Mapping[str, Fixed]) -> list[str]:
    """gputop's hosts that serve no host series, to be read GPU by GPU."""
    return sorted(name for name, host in fixed.items() if host.flavour == "gputop" and not host.rollup)


def _mixed_sizes(flavour: FlavourQueries, fixed: Mapping[str, Fixed]) -> str:
    """The matchers for the flavour's hosts read GPU by GPU whose GPUs differ in size; '' when there are none."""
    mixed = [
        name
        for name, host in fixed.items()
        if host.flavour == flavour.name and host.gpu_memory_total is None and not host.rollup
    ]
    return flavour.host_matcher(hosts_pattern(mixed)) if mixed else ""


def _hot_by_threshold(hosts: str | None, fixed: Mapping[str, Fixed], only: str) -> list[tuple[str, str]]:
    """The hot count of the hosts read GPU by GPU (``only`` matches them): one selection of temperatures per
    threshold.

    The commonest threshold takes every host not listed under another (hosts that came since the
    last ``fixed_query`` included); hosts whose GPUs differ are compared GPU by GPU.
    """
    by_slowdown: dict[float, list[str]] = {}
    mixed: list[str] = []
    for name, host in fixed.items():
        if host.flavour != "gputop" or host.rollup:
            continue
        if host.slowdown is None:
            mixed.append(name)
        else:
            by_slowdown.setdefault(host.slowdown, []).append(name)
    counted = []
    if by_slowdown or mixed:
        common = max(by_slowdown, key=lambda value: (len(by_slowdown[value]), value), default=DEFAULT_SLOWDOWN_C)
        others = [name for value, names in by_slowdown.items() if value != common for name in names] + mixed
        gputop_hosts = ",".join(m for m in (GPUTOP.host_matcher(hosts), only) if m)
        rest = GPUTOP.host_matcher(hosts_pattern(others), negate=True) if others else ""
        groups = [(common, GPUTOP.selector(gputop_hosts, rest))] + [
            (value, GPUTOP.selector(gputop_hosts, GPUTOP.host_matcher(hosts_pattern(names))))
            for value, names in sorted(by_slowdown.items())
            if value != common
        ]
        margin = TEMPERATURE_ALARM_MARGIN_C
        counted = [
            f"count(max by (hostname, gpu) ({select('gputop_gpu_temperature_celsius')} >= {value - margin:g}))"
            for value, select in groups
        ]
        if mixed:
            matchers = ",".join(m for m in (gputop_hosts, GPUTOP.host_matcher(hosts_pattern(mixed))) if m)
            counted.append(f"count(max by (hostname, gpu) ({hot_gpus(matchers)}))")
    dcgm = DCGM.selector(DCGM.host_matcher(hosts))("DCGM_FI_DEV_GPU_TEMP")
    counted.append(f"count({dcgm} >= {DEFAULT_SLOWDOWN_C - TEMPERATURE_ALARM_MARGIN_C:g})")
    # Each part its own tag: series with the same labels would be dropped by ``or``.
    return [(f"count:{HOT.key}#{index}", promql) for index, promql in enumerate(counted)]


def required_names() -> str:
    """A series matcher for the metrics the counts need: which of them exist is asked of the index alone."""
    names = sorted({name for count in COUNTS for name in count.requires})
    return f'{{__name__=~"{"|".join(names)}"}}'


def backfill_query(hostnames: Iterable[str], lookback_s: float) -> str:
    """The summaries of hosts that are gone, from the last figures Prometheus kept of them."""
    pattern = hosts_pattern(hostnames)
    parts: list[tuple[str, str]] = []
    for flavour in FLAVOURS:
        kept = flavour.selector(
            flavour.host_matcher(pattern), wrap=lambda selector: f"last_over_time({selector}[{lookback_s:g}s])"
        )
        for figure, promql in flavour.summaries(kept).items():
            parts.append((f"{flavour.name}:{figure}", promql))
    return tagged(parts)


def history_query(hostnames: Collection[str]) -> str:
    """GPU memory in use per host, for these hosts only (a range query)."""
    pattern = hosts_pattern(hostnames)
    gputop = GPUTOP.selector(GPUTOP.host_matcher(pattern))("gputop_gpu_memory_used_bytes")
    dcgm = DCGM.selector(DCGM.host_matcher(pattern))("DCGM_FI_DEV_FB_USED")
    return (
        f"sum by (hostname) ({gputop}) or "
        f'label_replace({MIB} * sum by (Hostname) ({dcgm}), "hostname", "$1", "Hostname", "(.*)")'
    )


def detail_query(hostname: str) -> str:
    """Every gputop series of one host but what its GPUs add up to, and DCGM exporter's GPU fields."""
    host = promql_string(hostname)
    names = "DCGM_FI_.+"  # every field it serves, those gputop does not take itself included
    # Its GPUs' series, not what they add up to; DCGM's MIG devices and per-pod series too.
    gputop = f'__name__=~"gputop_.+",__name__!~"{metric_names.HOST_SERIES_PREFIX}.+",hostname={host}'
    beside = f'{metric_names.BESIDE_GPUTOP_LABEL}!="{metric_names.BESIDE_GPUTOP_VALUE}"'
    dcgm = []
    for n, label in enumerate(DCGM_HOST_LABELS):
        unnamed = "".join(f',{earlier}=""' for earlier in DCGM_HOST_LABELS[:n])
        dcgm.append(f'{{__name__=~"{names}",{label}={host},{beside}{unnamed}}}')
    # A gputop host's DCGM series (--names both), for what its own names do not serve (the activity,
    # energy and health fields; its MIG devices): parse_detail keeps those. One selector, as ``or``
    # matches series by their labels without the name, and a MIG device's fields share theirs.
    own = f'{metric_names.BESIDE_GPUTOP_LABEL}="{metric_names.BESIDE_GPUTOP_VALUE}"'
    dcgm.append(f'{{__name__=~"{names}",{own},{metric_names.DCGM_HOSTNAME_LABELS[0]}={host}}}')
    return " or ".join([f"{{{gputop}}}", *dcgm])


def kept_detail_query(hostname: str, lookback_s: float) -> str:
    """The last GPU figures Prometheus kept of a host that is gone (no processes: they may be long over)."""
    host = promql_string(hostname)
    return f'last_over_time({{__name__=~"gputop_(gpu|exporter|last|up|sample).*",hostname={host}}}[{lookback_s:g}s])'
