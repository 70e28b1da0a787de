"""Bars and sparklines drawn with block characters, and the bounded history behind them."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from rich.text import Text

from gputop.core.model import GpuSample

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
_EIGHTHS = " ▏▎▍▌▋▊▉"


def sparkline(values: Sequence[float | None], width: int, low: float, high: float) -> str:
    """The last ``width`` values as block characters between ``low`` and ``high``; right-aligned."""
    if width <= 0:
        return ""
    recent = list(values)[-width:]
    span = high - low if high > low else 1.0
    chars = []
    for value in recent:
        if value is None:
            chars.append(" ")
            continue
        fraction = min(1.0, max(0.0, (value - low) / span))
        chars.append(SPARK_LEVELS[round(fraction * (len(SPARK_LEVELS) - 1))])
    return " " * (width - len(chars)) + "".join(chars)


def bar(fraction: float | None, width: int, style: str) -> Text:
    """A horizontal bar ``width`` cells wide, filled to ``fraction`` with eighth-cell precision."""
    if width <= 0:
        return Text()
    if fraction is None:
        return Text("╌" * width, style="dim")
    eighths = round(min(1.0, max(0.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return Text.assemble((filled, style), ("░" * (width - len(filled)), "bright_black"))


class GpuTrend:
    """Recent memory, temperature and utilisation of one GPU: only as many points as the widest sparkline."""

    def __init__(self, points: int) -> None:
        self.memory_used: deque[float | None] = deque(maxlen=points)
        self.temperature: deque[float | None] = deque(maxlen=points)
        self.utilization: deque[float | None] = deque(maxlen=points)
        # The GPU's memory size as last reported: the memory sparkline's scale through a gap.
        self.memory_total: int | None = None

    @property
    def points(self) -> int:
        return self.memory_used.maxlen or 0

    def add(self, gpu: GpuSample) -> None:
        self.memory_used.append(None if gpu.lost else gpu.memory_used)
        self.temperature.append(None if gpu.lost else gpu.temperature)
        self.utilization.append(None if gpu.lost else gpu.utilization_gpu)
        if gpu.memory_total is not None:
            self.memory_total = gpu.memory_total

    def resized(self, points: int) -> GpuTrend:
        """The same history kept in deques of another length."""
        trend = GpuTrend(points)
        trend.memory_used.extend(self.memory_used)
        trend.temperature.extend(self.temperature)
        trend.utilization.extend(self.utilization)
        trend.memory_total = self.memory_total
        return trend
