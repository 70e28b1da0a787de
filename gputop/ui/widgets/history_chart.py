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


def value_axis(need: float, intervals: int) -> tuple[float, list[float]]:
    """(top, ticks) of a value axis from 0 that reaches ``need``, drawn on ``intervals`` + 1 rows.

    plotext gives row ``r`` (0 at the bottom) the value ``r * top / intervals`` and puts a tick's
    label on the nearest row, so ticks that do not fall on a row are drawn unevenly apart (0, 25,
    50, 75 on an axis to 80 over 5 rows sit on rows 0, 2, 3, 5). Here every tick is a round step
    and falls exactly on a row, at most one every other row (where there are 4 rows or more): the
    axis top is ``step * intervals / rows_per_step``, the least above ``need``, preferring three
    ticks or more where that costs little room.
    """
    intervals = max(1, intervals)
    need = need if need > 0 else 1.0
    least = 2 if intervals >= 4 else 1
    best: tuple[float, int, float, float] | None = None
    magnitude = 10.0 ** math.floor(math.log10(need / intervals))
    for scale in (magnitude / 10, magnitude, magnitude * 10, magnitude * 100):
        for nice in _NICE[:-1]:
            if nice == 2.5 and scale < 10:
                continue  # 2.5 only where the ticks stay whole numbers (25, 250)
            step = nice * scale
            for rows_per_step in range(least, intervals + 1):
                top = step * intervals / rows_per_step
                if top < need * (1 - 1e-9):
                    continue
                count = intervals // rows_per_step + 1
                score = top / need + (0.15 if count < 3 else 0.0)
                if best is None or (score, -count) < (best[0], -best[1]):
                    best = (score, count, top, step)
    assert best is not None  # the largest scale always reaches need
    _, count, top, step = best
    return top, [round(n * step, 9) for n in range(count)]


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
            need = max(self._limit, highest) if self._limit is not None else highest
            top, ticks = value_axis(need, rows - 1)
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
