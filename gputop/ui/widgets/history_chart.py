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
from dataclasses import dataclass

from textual_plotext import Plot, PlotextPlot

# (span, step) of the time axis, in seconds: the smallest span the history fits in, less one step,
# is used; its start is a multiple of the step, so it moves only when the history crosses one.
TIME_SPANS_S = (
    (60, 10), (120, 20), (180, 30), (300, 30), (600, 60), (900, 60), (1200, 120), (1800, 300),
    (3600, 300), (5400, 600), (7200, 600), (14400, 1800), (43200, 3600), (86400, 7200),
)
# Value-axis steps, times a power of ten: 2.5 only where the ticks stay whole numbers (25, 250).
_NICE = (1.0, 2.0, 2.5, 5.0, 10.0)
# At most this many time labels on a chart.
_MOST_TIME_LABELS = 5


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


def time_ticks(start: float, span: float, canvas: int, label_width: int) -> list[float]:
    """The times labelled on a time axis ``canvas`` cells wide, evenly apart from ``start`` to its end.

    plotext takes the ticks through a set (its ``no_duplicates``), so it places their labels in an
    order that follows the process's string hash seed, and it moves a label towards the free
    cells beside it, or leaves it out where it would touch one placed before. A label stays within
    ``label_width - 1`` cells of its tick, so labels ``2 * label_width`` cells apart never see each
    other, and each lands on the same cells whatever the order: here they are at least that far
    apart, and where two do not fit, the start alone is labelled.
    """
    room = 2 * label_width
    count = min(_MOST_TIME_LABELS, 1 + max(0, canvas - 1) // room)
    if count < 2:
        return [start]
    return [start + span * n / (count - 1) for n in range(count)]


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
        self._runs = runs_of(timestamps, values)
        self._limit = limit
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width, rows = self.size.width, max(1, self.size.height - 1)
        axes = chart_axes(self._runs, self._limit, rows)
        if axes is None:
            shown: tuple[object, ...] = ("empty", width, rows)
        else:
            shown = (axes.start, axes.span, axes.top, width, rows,
                     [(len(run), run[:1], run[-1:]) for run in axes.runs])
        if shown == self._shown:
            return
        self._shown = shown
        draw(self.plt, axes, self.colour, width)
        self.refresh()


@dataclass(frozen=True)
class ChartAxes:
    """What a chart shows: its time axis (``start``, ``span`` seconds), its value axis (to ``top``,
    labelled at ``ticks``) and the runs of points within it."""

    start: float
    span: float
    top: float
    ticks: list[float]
    runs: list[list[tuple[float, float]]]


def chart_axes(runs: list[list[tuple[float, float]]], limit: float | None, rows: int) -> ChartAxes | None:
    """The axes for these runs of points on ``rows`` rows (``limit``: the value axis' least top); None: no points."""
    points = [point for run in runs for point in run]
    if not points:
        return None
    start, span = time_window(points[0][0], points[-1][0])
    highest = max(v for _, v in points)
    need = max(limit, highest) if limit is not None else highest
    top, ticks = value_axis(need, rows - 1)
    return ChartAxes(
        start=start, span=span, top=top, ticks=ticks, runs=[[(t, v) for t, v in run if t >= start] for run in runs]
    )


def draw(plt: Plot, axes: ChartAxes | None, colour: str, width: int) -> None:
    """Set up ``plt`` (cleared first) to draw ``axes`` ``width`` cells wide."""
    plt.clear_data()
    plt.clear_figure()
    plt.xaxes(False, False)
    plt.yaxes(True, False)
    if axes is None:
        plt.xticks([], [])
        plt.yticks([], [])
        plt.title("no history yet")
        return
    for run in axes.runs:
        if run:
            plt.plot([t for t, _ in run], [v for _, v in run], color=colour, marker="braille")
    start, span = axes.start, axes.span
    plt.xlim(start, start + span)
    plt.ylim(0, axes.top)
    labels = [tick_label(tick) for tick in axes.ticks]
    plt.yticks(axes.ticks, labels)
    form = "%H:%M:%S" if span < 600 else "%H:%M"
    canvas = width - max(len(label) for label in labels) - 1  # less the value labels and the axis
    positions = time_ticks(start, span, canvas, len(time.strftime(form)))
    plt.xticks(positions, [time.strftime(form, time.localtime(p)) for p in positions])


def runs_of(timestamps: Sequence[float], values: Sequence[float | None]) -> list[list[tuple[float, float]]]:
    """The (time, value) points, split where a value is missing."""
    runs: list[list[tuple[float, float]]] = [[]]
    for moment, value in zip(timestamps, values, strict=False):
        if value is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((moment, value))
    return [run for run in runs if run]
