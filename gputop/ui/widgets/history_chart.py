"""One GPU figure over the session, as a braille chart (plotext; imported only with the detail screen).

Now is at the right edge: the time axis ends at the newest sample and spans a round duration back
from it (labelled ``-120s`` ... ``now``, ``-5m`` ... ``now``), so every series reaches the edge and
the line scrolls left a tick at a time. Every chart of a screen is drawn on one ``TimeWindow`` and
with its value labels one width, so charts stacked under the same time labels put a moment on the
same column. The value axis is fixed by the GPU's limit where it has one, and its top is labelled.
Axis ticks are round numbers: on the value axis, in a unit that fits (MiB below a GiB); whole
seconds, minutes or hours back from now on the time axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from textual_plotext import Plot, PlotextPlot

# (span, step) of the time axis, in seconds: the smallest span the history fits in is used; its
# labels are a whole number of steps apart, back from now.
TIME_SPANS_S = (
    (60, 10), (120, 20), (180, 30), (300, 30), (600, 60), (900, 60), (1200, 120), (1800, 300),
    (3600, 300), (5400, 600), (7200, 600), (14400, 1800), (43200, 3600), (86400, 7200),
)
# Value-axis steps, times a power of ten: 1.5, 2.5 and 7.5 only where the ticks stay whole numbers (15, 250).
_NICE = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.5, 8.0, 10.0)
# At most this many time labels on a chart (-5m -4m -3m -2m -1m now).
_MOST_TIME_LABELS = 6
# Value labels are padded to this many cells, so charts of one screen start their plots on one
# column whatever their scale (80, 100, 750 and 1000 W alike).
VALUE_LABEL_WIDTH = 4


@dataclass(frozen=True)
class TimeWindow:
    """The time axis: ``span`` seconds up to ``end`` (now, at the right edge), labelled every ``step``
    seconds or a multiple of it."""

    end: float
    span: float
    step: float

    @property
    def start(self) -> float:
        return self.end - self.span


def time_window(oldest: float, newest: float) -> TimeWindow:
    """The time axis for a history from ``oldest`` to ``newest``: the least round span that holds it."""
    elapsed = newest - oldest
    for span, step in TIME_SPANS_S:
        if span >= elapsed:
            return TimeWindow(newest, float(span), float(step))
    span, step = TIME_SPANS_S[-1]
    return TimeWindow(newest, float(span), float(step))


def window_of(timestamps: Sequence[float]) -> TimeWindow | None:
    """The time axis for charts drawn from these sample times (None: no sample yet)."""
    return time_window(timestamps[0], timestamps[-1]) if timestamps else None


def value_axis(need: float, intervals: int) -> tuple[float, list[float]]:
    """(top, ticks) of a value axis from 0 that reaches ``need``, drawn on ``intervals`` + 1 rows.

    plotext gives row ``r`` (0 at the bottom) the value ``r * top / intervals`` and puts a tick's
    label on the nearest row, so ticks that do not fall on a row are drawn unevenly apart (0, 25,
    50, 75 on an axis to 80 over 5 rows sit on rows 0, 2, 3, 5). Here the top is a tick, labelled
    (a line drawn above the highest label would read as more than the axis says), every tick is a
    round step and falls exactly on a row, at most one every other row (where there are 4 rows or
    more): the axis is ``steps`` round steps, ``steps`` dividing ``intervals``, the least top
    above ``need``, preferring three ticks or more where that costs little room.
    """
    intervals = max(1, intervals)
    need = need if need > 0 else 1.0
    least = 2 if intervals >= 4 else 1
    best: tuple[float, int, float, float] | None = None
    for steps in range(1, intervals // least + 1):
        if intervals % steps:
            continue
        magnitude = 10.0 ** math.floor(math.log10(need / steps))
        for scale in (magnitude / 10, magnitude, magnitude * 10):
            for nice in _NICE:
                if nice != int(nice) and scale < 10:
                    continue  # 1.5, 2.5 and 7.5 only where the ticks stay whole numbers (15, 25, 750)
                step = nice * scale
                if need >= 1 and step != round(step):
                    continue  # whole ticks where the values are (0, 1, 2 MiB; not 0.6, 1.2, 1.8)
                top = step * steps
                if top < need * (1 - 1e-9):
                    continue
                score = top / need + (0.15 if steps < 2 else 0.0)
                if best is None or (score, -steps) < (best[0], -best[1]):
                    best = (score, steps, top, step)
    assert best is not None  # ten times the magnitude always reaches need
    _, steps, top, step = best
    return round(top, 9), [round(n * step, 9) for n in range(steps + 1)]


# The unit of a chart of bytes: MiB below a GiB (0.0005 GiB ticks say nothing), else GiB.
_MIB, _GIB = 1024**2, 1024**3


def bytes_unit(need: float) -> tuple[float, str]:
    """(divisor, unit) for a chart of bytes whose axis must reach ``need`` bytes."""
    return (_GIB, "GiB") if need >= _GIB else (_MIB, "MiB")


def ago_label(seconds: float, span: float) -> str:
    """How long before now a time label is, in one unit per axis: ``now``, ``-40s`` on an axis of two
    minutes or less, ``-3m`` or ``-2m30s`` up to two hours, ``-6h`` or ``-1h30m`` beyond."""
    back = round(seconds)
    if back <= 0:
        return "now"
    if span <= 120:
        return f"-{back}s"
    if span < 7200:
        return f"-{back // 60}m" if back % 60 == 0 else f"-{back // 60}m{back % 60:02d}s"
    return f"-{back // 3600}h" if back % 3600 == 0 else f"-{back // 3600}h{back % 3600 // 60:02d}m"


def time_ticks(window: TimeWindow, canvas: int) -> list[float]:
    """The times labelled on a time axis ``canvas`` cells wide: now and back to the window's start,
    a whole number of steps apart.

    plotext takes the ticks through a set (its ``no_duplicates``), so it places their labels in an
    order that follows the process's string hash seed, and it moves a label towards the free
    cells beside it, or leaves it out where it would touch one placed before. A label stays within
    ``label_width - 1`` cells of its tick, so labels ``2 * label_width`` cells apart never see each
    other, and each lands on the same cells whatever the order: here they are at least that far
    apart, and where two do not fit, now alone is labelled.
    """
    steps = round(window.span / window.step)
    # The most labels that fit, on a whole number of steps (120 s in steps of 20: every 40 s).
    for count in range(min(_MOST_TIME_LABELS, steps + 1), 1, -1):
        if steps % (count - 1):
            continue
        times = [window.start + window.span * n / (count - 1) for n in range(count)]
        label_width = max(len(ago_label(window.end - moment, window.span)) for moment in times)
        if (canvas - 1) / (count - 1) >= 2 * label_width:
            return times
    return [window.end]


def tick_label(value: float) -> str:
    """A value label, padded to the width every chart of a screen shares."""
    text = f"{value:.0f}" if value == round(value) else f"{value:g}"
    return text.rjust(VALUE_LABEL_WIDTH)


class HistoryChart(PlotextPlot):
    """A line chart of (time, value) points on fixed axes; redrawn only when what it shows changes."""

    def __init__(self, colour: str, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.colour = colour
        self._shown: tuple[object, ...] | None = None
        self._runs: list[list[tuple[float, float]]] = []
        self._limit: float | None = None
        self._window: TimeWindow | None = None

    def show(
        self,
        timestamps: Sequence[float],
        values: Sequence[float | None],
        limit: float | None,
        window: TimeWindow | None = None,
    ) -> None:
        """Chart these points (a missing value is a gap in the line); ``limit`` is the top of the value
        axis (else the highest value); ``window`` the time axis the screen's charts share (else the
        one of ``timestamps``: charts given the same times share it too)."""
        self._runs = runs_of(timestamps, values)
        self._limit = limit
        self._window = window or window_of(timestamps)
        self._draw()

    def show_bytes(
        self,
        title: str,
        timestamps: Sequence[float],
        values: Sequence[int | float | None],
        limit: float | None,
        window: TimeWindow | None = None,
    ) -> None:
        """Chart bytes in the unit that fits them (``bytes_unit``), named in the border title:
        ``title (GiB)``, ``title (MiB)``; ``limit`` in bytes too."""
        need = max([v for v in values if v is not None] + ([limit] if limit is not None else []), default=0.0)
        divisor, unit = bytes_unit(need)
        self.border_title = f"{title} ({unit})"
        scaled = [None if v is None else v / divisor for v in values]
        self.show(timestamps, scaled, None if limit is None else limit / divisor, window)

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width, rows = self.size.width, max(1, self.size.height - 1)
        axes = chart_axes(self._runs, self._limit, rows, self._window)
        if axes is None:
            shown: tuple[object, ...] = ("empty", width, rows)
        else:
            shown = (axes.window, axes.top, width, rows, [(len(run), run[:1], run[-1:]) for run in axes.runs])
        if shown == self._shown:
            return
        self._shown = shown
        draw(self.plt, axes, self.colour, width)
        self.refresh()


@dataclass(frozen=True)
class ChartAxes:
    """What a chart shows: its time axis (``window``), its value axis (to ``top``, labelled at
    ``ticks``) and the runs of points within it."""

    window: TimeWindow
    top: float
    ticks: list[float]
    runs: list[list[tuple[float, float]]]


def chart_axes(
    runs: list[list[tuple[float, float]]], limit: float | None, rows: int, window: TimeWindow | None = None
) -> ChartAxes | None:
    """The axes for these runs of points on ``rows`` rows (``limit``: the value axis' least top;
    ``window``: the time axis, else the one the points span); None: no points."""
    points = [point for run in runs for point in run]
    if not points:
        return None
    window = window or time_window(points[0][0], points[-1][0])
    shown = [[(t, v) for t, v in run if window.start <= t <= window.end] for run in runs]
    highest = max(v for _, v in points)
    need = max(limit, highest) if limit is not None else highest
    top, ticks = value_axis(need, rows - 1)
    return ChartAxes(window=window, top=top, ticks=ticks, runs=[run for run in shown if run])


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
        plt.plot([t for t, _ in run], [v for _, v in run], color=colour, marker="braille")
    window = axes.window
    plt.xlim(window.start, window.end)
    plt.ylim(0, axes.top)
    labels = [tick_label(tick) for tick in axes.ticks]
    plt.yticks(axes.ticks, labels)
    canvas = width - max(len(label) for label in labels) - 1  # less the value labels and the axis
    positions = time_ticks(window, canvas)
    plt.xticks(positions, [ago_label(window.end - moment, window.span) for moment in positions])


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
