"""Cells of the cluster tables: bars, sparklines, status, and the host filter and sort orders."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text

from gputop.core.cluster.model import ClusterGpu, ClusterHost
from gputop.core.format import NA, fmt_bytes, fmt_duration, fmt_percent, fmt_temperature, fmt_watts, safe_text

BAR_WIDTH = 12
SPARK_WIDTH = 24
_SPARK_BLOCKS = "▁▂▃▄▅▆▇█"


def level_style(percent: float | None, warn: float = 70.0, alarm: float = 90.0) -> str:
    if percent is None:
        return "dim"
    if percent >= alarm:
        return "bold red"
    if percent >= warn:
        return "yellow"
    return "green"


def memory_bar(gpu: ClusterGpu, width: int = BAR_WIDTH) -> Text:
    """'██████░░░░░░  50%' in the colour of how full it is; 'N/A' when unknown."""
    percent = gpu.memory_percent
    if percent is None:
        return Text(NA, style="dim")
    filled = round(width * min(100.0, percent) / 100.0)
    bar = Text("█" * filled, style=level_style(percent))
    bar.append("░" * (width - filled), style="dim")
    bar.append(f" {percent:3.0f}%")
    return bar


def sparkline(values: Sequence[float | None], maximum: float | None, width: int = SPARK_WIDTH) -> str:
    """The newest ``width`` buckets of ``values`` as block characters scaled to ``maximum``; gaps as spaces."""
    if not values:
        return ""
    known = [v for v in values if v is not None]
    top = maximum if maximum else (max(known) if known else 0.0)
    buckets: list[float | None] = []
    per_bucket = max(1, -(-len(values) // width))
    for start in range(0, len(values), per_bucket):
        chunk = [v for v in values[start : start + per_bucket] if v is not None]
        buckets.append(max(chunk) if chunk else None)
    out = []
    for value in buckets[-width:]:
        if value is None or top <= 0:
            out.append(" ")
        else:
            level = min(len(_SPARK_BLOCKS) - 1, max(0, round(value / top * (len(_SPARK_BLOCKS) - 1))))
            out.append(_SPARK_BLOCKS[level])
    return "".join(out)


def host_status(host: ClusterHost) -> Text:
    """'stale 42s' for a host whose newest sample is old or whose scrape is down, 'live' otherwise."""
    if host.stale:
        age = "?" if host.age_s is None else fmt_duration(host.age_s)
        return Text(f"stale {age}", style="bold red")
    return Text("live", style="green")


def _lines(gpus: Sequence[ClusterGpu], cell: Callable[[ClusterGpu], Text | str]) -> Text:
    return Text("\n").join(Text(c) if isinstance(c := cell(gpu), str) else c for gpu in gpus)


def _used_total(gpu: ClusterGpu) -> str:
    if gpu.memory_used is None and gpu.memory_total is None:
        return NA
    return f"{fmt_bytes(gpu.memory_used)}/{fmt_bytes(gpu.memory_total)}"


def _gpu_label(gpu: ClusterGpu) -> Text:
    if gpu.lost:
        return Text(f"{gpu.index} LOST", style="bold red")
    return Text(str(gpu.index), style="dim" if gpu.stale else "")


HOST_COLUMNS = ("Host", "Status", "GPU", "Model", "Memory", "Used/Total", "Util", "Temp", "Power", "Memory history")


def host_cells(host: ClusterHost) -> tuple[Text, ...]:
    """One cell per HOST_COLUMNS; a line per GPU in the GPU columns."""
    gpus = host.gpus
    return (
        Text(safe_text(host.hostname, 32), style="bold"),
        host_status(host),
        _lines(gpus, _gpu_label),
        _lines(gpus, lambda g: safe_text(g.name, 28)),
        _lines(gpus, memory_bar),
        _lines(gpus, _used_total),
        _lines(gpus, lambda g: Text(fmt_percent(g.utilization_gpu), style=level_style(g.utilization_gpu, 101, 101))),
        _lines(gpus, lambda g: fmt_temperature(g.temperature)),
        _lines(gpus, lambda g: fmt_watts(g.power_draw)),
        _lines(gpus, lambda g: Text(sparkline(g.memory_history, g.memory_total), style="cyan")),
    )


@dataclass(frozen=True, slots=True)
class SortOrder:
    """A column to sort hosts by; ``descending`` is its natural direction (largest first for figures)."""

    name: str
    key: Callable[[ClusterHost], float | str | None]
    descending: bool


SORT_ORDERS = (
    SortOrder("host", lambda h: h.hostname, False),
    SortOrder("memory", lambda h: h.memory_percent, True),
    SortOrder("utilization", lambda h: h.utilization, True),
    SortOrder("temperature", lambda h: h.temperature, True),
    SortOrder("power", lambda h: h.power_draw, True),
)


def sort_hosts(hosts: Sequence[ClusterHost], order: SortOrder, inverted: bool = False) -> list[ClusterHost]:
    """Hosts in ``order`` (flipped when ``inverted``); hosts without the figure always last, by name."""
    known = [h for h in hosts if order.key(h) is not None]
    unknown = sorted((h for h in hosts if order.key(h) is None), key=lambda h: h.hostname)
    by_name = sorted(known, key=lambda h: h.hostname)
    ranked = sorted(by_name, key=order.key, reverse=order.descending != inverted)  # type: ignore[arg-type]
    return ranked + unknown


def parse_filter(text: str) -> re.Pattern[str] | None:
    """The hostname filter: plain text matches anywhere, case-insensitively; ``re:`` starts a regex.

    Raises ``re.error`` for an invalid regex; None means no filter.
    """
    if text.startswith("re:"):
        expression = text[3:]
        return re.compile(expression) if expression else None
    if not text:
        return None
    return re.compile(re.escape(text), re.IGNORECASE)
