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

from gputop.ui.widgets.history_chart import time_ticks

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
    # Every label asked for is drawn, in order: 110 s of history on a 3-minute axis, 1 h on 1 hour.
    assert time_axis(first, 1, 16) == ["16:00:00"]
    assert time_axis(first, 1, 61) == ["16:00:00", "16:01:00", "16:02:00", "16:03:00"]
    assert time_axis(first, 1, 130) == ["16:00:00", "16:00:45", "16:01:30", "16:02:15", "16:03:00"]
    assert time_axis(first, 2, 58) == ["16:00", "16:15", "16:30", "16:45", "17:00"]


def test_labels_are_two_label_widths_apart_and_a_narrow_chart_labels_its_start_only() -> None:
    # A canvas of 56 cells, labels 8 wide: ticks 55/3 cells apart (>= 16), not 55/4 (< 16).
    assert time_ticks(0.0, 120.0, 56, 8) == [0.0, 40.0, 80.0, 120.0]
    assert time_ticks(0.0, 120.0, 33, 8) == [0.0, 60.0, 120.0]
    assert time_ticks(0.0, 120.0, 32, 8) == [0.0, 120.0]
    assert time_ticks(0.0, 120.0, 16, 8) == [0.0]
    assert time_ticks(0.0, 600.0, 200, 5) == [0.0, 150.0, 300.0, 450.0, 600.0]  # five at most
