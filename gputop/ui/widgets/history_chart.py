"""A plotext chart of one series over the session, with round axis ticks.

Imported lazily with the screens that chart (plotext is not needed for the first frame).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from textual_plotext import PlotextPlot

# Steps an axis may take, times a power of ten: 83.3/66.7 never appear, 80/60 do.
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def round_ticks(low: float, high: float, count: int) -> list[float]:
    """At most ``count`` round values from ``low`` up to at least ``high`` (1, 2, 2.5 or 5 times 10^n apart)."""
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(1, count - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(power * nice for nice in _NICE_STEPS if power * nice >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value < high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def tick_label(value: float) -> str:
    """'80', '2.5': no trailing zeros."""
    return f"{value:.10g}"


def time_ticks(first: float, last: float, count: int) -> tuple[list[float], list[str]]:
    """``count`` evenly spread times of day from ``first`` to ``last`` (one when they are equal)."""
    if last <= first:
        return [first], [time.strftime("%H:%M:%S", time.localtime(first))]
    positions = [first + (last - first) * n / (count - 1) for n in range(count)]
    return positions, [time.strftime("%H:%M:%S", time.localtime(p)) for p in positions]


class HistoryChart(PlotextPlot):
    """One series against the time of day."""

    _last: tuple[str, Sequence[float], Sequence[float | None], str, float | None] | None = None

    def on_resize(self) -> None:
        # The ticks that fit depend on the size: draw again at the new one.
        if self._last is not None:
            title, timestamps, values, colour, high = self._last
            self.plot(title, timestamps, values, colour, high=high)

    def plot(
        self,
        title: str,
        timestamps: Sequence[float],
        values: Sequence[float | None],
        colour: str,
        *,
        high: float | None = None,
    ) -> None:
        """Draw ``values`` (None: not available, left out); the y axis runs from 0 to ``high`` when given."""
        self._last = (title, timestamps, values, colour, high)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        points = [(t, v) for t, v in zip(timestamps, values, strict=False) if v is not None]
        if not points:
            plt.title(f"{title}: no data")
            self.refresh()
            return
        plt.title(title)
        times = [t for t, _ in points]
        series = [v for _, v in points]
        plt.plot(times, series, color=colour, marker="braille")
        # Time labels are 8 wide: as many as fit side by side (plotext overlaps them otherwise).
        positions, labels = time_ticks(times[0], times[-1], max(2, min(4, (self.size.width - 8) // 10)))
        plt.xticks(positions, labels)
        top = max(high or 0.0, max(series))
        rows = max(2, min(5, (self.size.height - 4) // 2 + 1))
        ticks = round_ticks(0.0, top if top > 0 else 1.0, rows)
        plt.ylim(ticks[0], ticks[-1])
        plt.yticks(ticks, [tick_label(tick) for tick in ticks])
        self.refresh()
