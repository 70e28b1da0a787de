"""The charts' time labels land on the same cells whatever the string hash seed of the process.

plotext takes the ticks it is given through a set, so the order it places their labels in follows
``PYTHONHASHSEED``; where two labels came near each other, one moved a cell or was left out,
differently from run to run (the detail and process screens' "one cell" shift between runs).
Each chart here is drawn the way the detail screen draws it, in two processes with different
seeds, at many widths and over spans labelled in seconds and in minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gputop.ui.widgets.history_chart import TimeWindow, ago_label, time_ticks

ROOT = Path(__file__).resolve().parents[2]

# Draws every chart and prints them as a JSON list of lines; the last line of each is its time axis.
DRAW = """
import json
from rich.text import Text
from textual_plotext import Plot
from gputop.ui.widgets.history_chart import chart_axes, draw, runs_of

NOW = 1_764_000_000.0  # 16:00:00 UTC
WIDTHS = {widths}
charts = []
for seconds, step in ((64, 8), (110, 1), (3000, 30)):  # 2-minute, 3-minute and 1-hour axes
    times = [NOW + t for t in range(0, seconds + 1, step)]
    values = [50 + 30 * ((t // step) % 5) / 4 for t in range(0, seconds + 1, step)]
    for width in WIDTHS:
        rows = 8
        plot = Plot()
        draw(plot, chart_axes(runs_of(times, values), 100.0, rows), "green", width)
        plot.plotsize(width, rows + 1)
        charts.append(Text.from_ansi(plot.build()).plain.splitlines())
print(json.dumps(charts))
"""
# Under plotext's own order, the labels at these widths moved or went missing between seeds 1 and 2.
WIDTHS = (16, 19, 40, 46, 58, 61, 80, 130)


def charts_under_seeds(*seeds: str) -> list[list[list[str]]]:
    """The charts drawn in one process per seed, the processes run side by side."""
    runs = []
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": seed, "TZ": "UTC", "PYTHONPATH": str(ROOT)}
        script = DRAW.format(widths=WIDTHS)
        runs.append(subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True))
    outputs = [run.communicate(timeout=60)[0] for run in runs]
    assert [run.returncode for run in runs] == [0] * len(seeds)
    return [json.loads(output) for output in outputs]


def time_axis(charts: list[list[str]], history: int, width: int) -> list[str]:
    return charts[history * len(WIDTHS) + WIDTHS.index(width)][-1].split()


def test_two_hash_seeds_draw_the_same_time_labels_in_the_same_cells() -> None:
    first, second = charts_under_seeds("1", "2")
    assert len(first) == 3 * len(WIDTHS)
    assert [chart[-1] for chart in first] == [chart[-1] for chart in second]
    assert first == second
    # Every label asked for is drawn, in order, back from now: 64 s and 110 s of history on a
    # 2-minute axis, 50 minutes on an hour; a narrow chart labels its two ends only.
    assert time_axis(first, 0, 16) == ["-120s", "now"]
    assert time_axis(first, 1, 61) == ["-120s", "-80s", "-40s", "now"]
    assert time_axis(first, 2, 19) == ["-60m", "now"]
    assert time_axis(first, 2, 58) == ["-60m", "-45m", "-30m", "-15m", "now"]


def test_labels_are_two_label_widths_apart_on_whole_steps_back_from_now() -> None:
    # Two minutes in steps of 20 s: labels 40 s apart where 3 intervals of 2 x 5 cells fit.
    two_minutes = TimeWindow(end=1000.0, span=120.0, step=20.0)
    assert time_ticks(two_minutes, 31) == [880.0, 920.0, 960.0, 1000.0]
    assert time_ticks(two_minutes, 30) == [880.0, 940.0, 1000.0]
    assert time_ticks(two_minutes, 21) == [880.0, 940.0, 1000.0]
    assert time_ticks(two_minutes, 20) == [880.0, 1000.0]
    assert time_ticks(two_minutes, 10) == [1000.0]  # now alone
    # Five minutes in steps of 30 s: six labels a minute apart at most.
    assert time_ticks(TimeWindow(end=0.0, span=300.0, step=30.0), 200) == [-300.0, -240.0, -180.0, -120.0, -60.0, 0.0]


def test_a_label_says_how_long_before_now_in_one_unit_per_axis() -> None:
    assert [ago_label(back, 120) for back in (0, 40, 120)] == ["now", "-40s", "-120s"]
    assert [ago_label(back, 300) for back in (60, 150, 300)] == ["-1m", "-2m30s", "-5m"]
    assert [ago_label(back, 14400) for back in (5400, 7200)] == ["-1h30m", "-2h"]
