"""What the GPU detail screen shows at 80x24 and 120x40: the whole header, MIG devices, the forecast,
clocks against their maximum, charts tall enough to read on round axes ending now, the replay position."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from textual.pilot import Pilot

from gputop.core.model import MigSample, Snapshot
from gputop.core.recording.record import Recorder, read_recording
from gputop.core.recording.replay import Replay
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.recorded import ReplaySource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen, header_fields
from gputop.ui.widgets.history_chart import HistoryChart, time_window, value_axis

from .factory import GIB, NOW, demo_snapshots, gpu, make_app, proc, snapshot
from .test_terminal_sizes import rendered

STEP_S = 8.0  # one tick every 8 s: growth of 1 GiB a tick is GIB/8 bytes/s


def tick(n: int) -> Snapshot:
    """GPU 0 climbs 1 GiB a tick (PID 101); GPU 1 has two MIG devices, the first climbing 1 GiB a tick."""
    first = dataclasses.replace(
        gpu(0, [proc(101, 0, 10 + n, command="python leak.py")]),
        clock_sm_max=1980, clock_memory=2619, clock_memory_max=2619, fan_speed=45.0,
        pcie_rx=1.5 * GIB, pcie_tx=300 * 1024**2,
    )
    migs = (
        MigSample(index=0, name="NVIDIA A100-SXM4-80GB MIG 3g.40gb", memory_total=40 * GIB, memory_used=(10 + n) * GIB),
        MigSample(index=1, name="NVIDIA A100-SXM4-80GB MIG 1g.10gb", memory_total=10 * GIB, memory_used=2 * GIB),
    )
    second = dataclasses.replace(
        gpu(1, [proc(201, 1, 5, mig=0)], name="NVIDIA A100-SXM4-80GB"), mig_devices=migs, mig_mode=True
    )
    return snapshot(first, second, timestamp=NOW + n * STEP_S)


def clock(seconds_after_now: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(NOW + seconds_after_now))


def chart_lines(app: GpuTopApp, name: str) -> list[str]:
    chart = app.screen.query_one(f"#chart-{name}", HistoryChart)
    region = chart.content_region
    lines = rendered(app).splitlines()[region.y : region.bottom]
    return [line[region.x : region.right] for line in lines]


def y_labels(lines: list[str]) -> list[str]:
    """The value axis' labels, top to bottom; each must sit on the row whose value it names."""
    plot = lines[:-1]  # the last line is the time axis
    labelled = [(len(plot) - 1 - row, float(line.split("┤")[0])) for row, line in enumerate(plot) if "┤" in line]
    # plotext gives row r (0 at the bottom) the value r * top / (rows - 1): one top for every label.
    assert labelled[-1] == (0, 0.0), labelled
    tops = {round(value * (len(plot) - 1) / row, 6) for row, value in labelled if row}
    assert len(tops) == 1, f"labels off their rows: {labelled}"
    return [line.split("┤")[0].strip() for line in plot if "┤" in line]


async def opened(app: GpuTopApp, pilot: Pilot[int], index: int) -> None:
    """64 s of history (9 ticks), then the detail screen of GPU ``index``."""
    for n in range(9):
        app.apply_snapshot(tick(n))
    await pilot.pause()
    app.navigation.detail(index)
    await pilot.pause()


async def test_at_80x24_the_header_says_everything_and_the_charts_have_six_rows_on_round_axes() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot, 0)  # 64 s of history; GPU 0 at 18.5 of 80 GiB, +1 GiB every 8 s
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 0
        lines = rendered(app).splitlines()
        assert [line.rstrip() for line in lines[:4]] == [
            " GPU 0  NVIDIA H100 80GB HBM3  memory 18.5GiB/80.0GiB 23% full in ~8m12s",
            "util 50%  temp 60°C (slowdown 87°C)  power 300W/700W  fan 45%  SM 1500/1980MHz",
            "memory clock 2619/2619MHz  PCIe rx 1.5GiB/s tx 300.0MiB/s  P0  GPU-0000  bus N/A",
            "───────────Memory used (GiB)────────────────────────Temperature (°C)────────────",
        ]
        memory = chart_lines(app, "memory")
        # Six rows of chart above the time axis.
        assert len(memory) == 7
        # Round ticks, each on its own row, one every other row at most, the top labelled: on 6 rows
        # 0 and 80 for 80 GiB (5 intervals: no round middle tick falls on a row).
        assert y_labels(memory) == ["80", "0"]
        assert y_labels(chart_lines(app, "utilization")) == ["100", "0"]
        assert y_labels(chart_lines(app, "power")) == ["750", "0"]
        # 64 s of history on a 2-minute axis that ends now, labelled back from now.
        assert memory[-1].split() == ["-120s", "-80s", "-40s", "now"]
        # The process panel keeps its header and the process.
        assert "python leak.py" in lines[-3]


async def test_at_120x40_mig_devices_show_their_memory_and_forecast() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot, 1)
        lines = [line.rstrip() for line in rendered(app).splitlines()]
        # MIG 0: (40 - 18) GiB at 1/8 GiB/s = 176 s.
        assert lines[:3] == [
            " GPU 1  NVIDIA A100-SXM4-80GB  memory 5.5GiB/80.0GiB 7%  util 50%  temp 60°C (slowdown 87°C)"
            "  power 300W/700W  fan N/A",
            "SM 1500MHz  memory clock N/A  PCIe rx N/A tx N/A  P0  GPU-0001  bus N/A",
            "MIG 0 3g.40gb 18.0GiB/40.0GiB 45% full in ~2m56s  MIG 1 1g.10gb 2.0GiB/10.0GiB 20%",
        ]
        # Neither MIG device lists a process for its memory: the diagnosis panel says so, above the charts.
        unattributed = "│  GPU 1 MIG 0 (no process) 18.0GiB of memory no listed process accounts for."
        assert lines[4] == unattributed + " " * 42 + "│"
        memory = chart_lines(app, "memory")
        assert len(memory) == 8
        assert y_labels(memory) == ["80", "40", "0"]
        # Four labels, not seven: labels two label widths apart land on the same cells in every run.
        assert memory[-1].split() == ["-120s", "-80s", "-40s", "now"]


async def test_the_header_shows_the_memory_temperature_and_pcie_replays_only_where_there_are_some() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for n in range(2):
            first, second = tick(n).gpus
            first = dataclasses.replace(first, memory_temperature=66.0, pcie_replay_errors=12)
            second = dataclasses.replace(second, memory_temperature=None, pcie_replay_errors=0)
            app.apply_snapshot(dataclasses.replace(tick(n), gpus=(first, second)))
        await pilot.pause()
        app.navigation.detail(0)
        await pilot.pause()
        lines = [line.rstrip() for line in rendered(app).splitlines()]
        assert lines[:3] == [
            " GPU 0  NVIDIA H100 80GB HBM3  memory 11.5GiB/80.0GiB 14%  util 50%  temp 60°C (slowdown 87°C)"
            "  memory 66°C",
            "power 300W/700W  fan 45%  SM 1500/1980MHz  memory clock 2619/2619MHz  PCIe rx 1.5GiB/s tx 300.0MiB/s"
            " replays 12  P0",
            "GPU-0000  bus N/A",
        ]
    # No sensor and no replay: neither is mentioned (the GPU's own temperature is).
    header = "  ".join(field.plain for group in header_fields(second, None, None) for field in group)
    assert "temp 60°C (slowdown 87°C)  power" in header and "replays" not in header


async def test_a_tick_keeps_the_axes_and_draws_the_newest_point_at_the_right_edge() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot, 0)
        before = chart_lines(app, "memory")
        app.apply_snapshot(tick(9))
        await pilot.pause()
        after = chart_lines(app, "memory")
        # The labels say how long ago, so they stay put while the line scrolls left under them.
        assert after[-1] == before[-1]
        assert y_labels(after) == y_labels(before)
        # The newest sample (8 s after the one before) in the last column, as before it.
        for lines in (before, after):
            last = max(x for line in lines[:-1] for x, cell in enumerate(line) if 0x2801 <= ord(cell) <= 0x28FF)
            assert last == len(lines[0]) - 1
        assert after != before


async def test_in_a_replay_the_header_keeps_the_position_and_follows_a_step(tmp_path: Path) -> None:
    path = tmp_path / "ten.jsonl"
    recorder = Recorder(str(path))
    for one in demo_snapshots(2, 10):
        recorder.write(one)
    recorder.close()
    replay = Replay(read_recording(str(path)), paused=True)
    app = GpuTopApp(Sampler(ReplaySource(replay)), RunConfig(), replay=replay)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.navigation.detail(0)
        await pilot.pause()
        header = rendered(app).splitlines()[0]
        assert f"REPLAY  1/10 {clock(0)} +0s 1x paused" in header
        await pilot.press("right")
        await pilot.pause()
        header = rendered(app).splitlines()[0]
        assert f"REPLAY  2/10 {clock(1)} +1s 1x paused" in header
        assert header.startswith(" GPU 0  NVIDIA H100 80GB HBM3  REPLAY")


def test_over_a_long_session_the_time_axis_ends_at_the_newest_sample_and_keeps_its_span() -> None:
    # An hour of history at 1 s, sliding for another hour: one round span, now at its right edge.
    seconds = range(3600, 7200)
    windows = [time_window(NOW + t - 3600, NOW + t) for t in seconds]
    assert all(window.end == NOW + t for t, window in zip(seconds, windows, strict=True))
    assert {(window.span, window.step) for window in windows} == {(3600.0, 300.0)}


def test_value_axis_ticks_are_round_and_each_falls_on_a_row() -> None:
    # (need, rows - 1) -> (top, ticks): plotext gives row r the value r * top / (rows - 1).
    # The top is always a tick, labelled (issue 34, point 8: no line drawn above the highest label).
    assert value_axis(80, 5) == (80, [0, 80])
    assert value_axis(80, 6) == (80, [0, 40, 80])
    assert value_axis(80, 10) == (80, [0, 40, 80])
    assert value_axis(40, 12) == (40, [0, 10, 20, 30, 40])
    assert value_axis(0.5, 5) == (0.5, [0, 0.5])
    # 130 GiB used of an H200's 141: the axis reaches above both, and says how far.
    assert value_axis(141, 10) == (150, [0, 30, 60, 90, 120, 150])
    for need in (0.3, 1, 7, 18.5, 64, 80, 87, 100, 141, 450, 700, 1000, 81920):
        for intervals in range(1, 30):
            top, ticks = value_axis(need, intervals)
            assert top >= need and ticks[0] == 0 and len(ticks) >= 2 and ticks[-1] == top
            rows = [tick * intervals / top for tick in ticks]
            assert all(abs(row - round(row)) < 1e-6 for row in rows), (need, intervals, top, ticks)
            gaps = {round(b - a) for a, b in zip(rows, rows[1:], strict=False)}
            assert len(gaps) == 1 and (intervals < 4 or gaps.pop() >= 2)


async def test_a_tick_that_arrives_as_the_detail_screen_opens_is_shown_once_it_is_built() -> None:
    # Under load the next tick can come between opening the screen and its widgets being made.
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(tick(0))
        await pilot.pause()
        app.navigation.detail(0)
        assert isinstance(app.screen, DetailScreen) and not app.screen.is_mounted
        app.apply_snapshot(tick(1))  # before: NoMatches for the header, and the app stopped
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, DetailScreen)
        header = rendered(app).splitlines()[0]
        assert header.startswith(" GPU 0  NVIDIA H100 80GB HBM3  memory 11.5GiB/80.0GiB")  # tick 1's, not 0's 10.5
