"""One GPU figure over the session, as a braille chart (plotext; imported only with the detail screen).

The chart is drawn so that a tick changes as few cells as it can: the time axis spans a round
duration from a round start and stays put while the history grows into it (a new sample adds its
own dots at the right, and the terminal is sent only those cells), moving a step at a time when
the history outgrows it; the value axis is fixed by the GPU's limit where it has one. Axis ticks
are round numbers: integers on the value axis, whole seconds or minutes on the time axis.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from textual_plotext import PlotextPlot

# (span, step) of the time axis, in seconds: the smallest span the history fits in, less one step,
# is used; its start is a multiple of the step, so it moves only when the history crosses one.
TIME_SPANS_S = (
    (60, 10), (120, 20), (180, 30), (300, 30), (600, 60), (900, 60), (1200, 120), (1800, 300),
    (3600, 300), (5400, 600), (7200, 600), (14400, 1800), (43200, 3600), (86400, 7200),
)
# Value-axis steps, times a power of ten: 2.5 only where the ticks stay whole numbers (25, 250).
_NICE = (1.0, 2.0, 2.5, 5.0, 10.0)
# Width of a time label ("15:06:40") and the gap beside it.
_LABEL_WIDTH = 10


def time_window(oldest: float, newest: float) -> tuple[float, float]:
    """(start, span) of the time axis for a history from ``oldest`` to ``newest``."""
    elapsed = newest - oldest
    for span, step in TIME_SPANS_S:
        if span - step >= elapsed:
            return math.floor(oldest / step) * step, float(span)
    span, step = TIME_SPANS_S[-1]
    return math.floor((newest - span + step) / step) * step, float(span)


def value_ticks(top: float, rows: int) -> list[float]:
    """Round ticks from 0 up to ``top``, at most one every other row of ``rows``."""
    most = max(2, rows // 2 + 1)
    if top <= 0:
        return [0.0]
    magnitude = 10.0 ** math.floor(math.log10(top / (most - 1)))
    step = next(
        m * magnitude
        for m in _NICE
        if int(top / (m * magnitude) + 1e-9) + 1 <= most and (m != 2.5 or magnitude >= 10)
    )
    return [round(n * step, 9) for n in range(int(top / step + 1e-9) + 1)]


def tick_label(value: float) -> str:
    return f"{value:.0f}" if value == round(value) else f"{value:g}"


class HistoryChart(PlotextPlot):
    """A line chart of (time, value) points on fixed axes; redrawn only when what it shows changes."""

    def __init__(self, colour: str, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.colour = colour
        self._shown: tuple[object, ...] | None = None
        self._runs: list[list[tuple[float, float]]] = []
        self._limit: float | None = None

    def show(self, timestamps: Sequence[float], values: Sequence[float | None], limit: float | None) -> None:
        """Chart these points (a missing value is a gap in the line); ``limit`` is the top of the value
        axis (else the highest value)."""
        self._runs = _runs(timestamps, values)
        self._limit = limit
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width, rows = self.size.width, max(1, self.size.height - 1)
        points = [point for run in self._runs for point in run]
        if not points:
            shown: tuple[object, ...] = ("empty", width, rows)
        else:
            start, span = time_window(points[0][0], points[-1][0])
            highest = max(v for _, v in points)
            top = max(self._limit, highest) if self._limit is not None else _round_up(highest, rows)
            runs = [[(t, v) for t, v in run if t >= start] for run in self._runs]
            shown = (start, span, top, width, rows, [(len(run), run[:1], run[-1:]) for run in runs])
        if shown == self._shown:
            return
        self._shown = shown
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.xaxes(False, False)
        plt.yaxes(True, False)
        if not points:
            plt.xticks([], [])
            plt.yticks([], [])
            plt.title("no history yet")
            self.refresh()
            return
        for run in runs:
            if run:
                plt.plot([t for t, _ in run], [v for _, v in run], color=self.colour, marker="braille")
        plt.xlim(start, start + span)
        plt.ylim(0, top)
        ticks = value_ticks(top, rows)
        plt.yticks(ticks, [tick_label(tick) for tick in ticks])
        count = max(2, min(5, (width - 6) // _LABEL_WIDTH))
        positions = [start + span * n / (count - 1) for n in range(count)]
        form = "%H:%M:%S" if span < 600 else "%H:%M"
        plt.xticks(positions, [time.strftime(form, time.localtime(p)) for p in positions])
        self.refresh()


def _runs(timestamps: Sequence[float], values: Sequence[float | None]) -> list[list[tuple[float, float]]]:
    """The (time, value) points, split where a value is missing."""
    runs: list[list[tuple[float, float]]] = [[]]
    for moment, value in zip(timestamps, values, strict=False):
        if value is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((moment, value))
    return [run for run in runs if run]


def _round_up(value: float, rows: int) -> float:
    """The top of an axis with no limit: ``value`` rounded up to its tick step."""
    if value <= 0:
        return 1.0
    ticks = value_ticks(value, rows)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else ticks[0] or 1.0
    return max(value, math.ceil(value / step - 1e-9) * step)
