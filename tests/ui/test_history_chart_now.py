"""The detail screen's charts, read as the user reads them: now at the right edge, each series up to
it, one time axis for every chart (charts stacked under the same labels agree, column for column)."""

from __future__ import annotations

from gputop.ui.widgets.history_chart import HistoryChart, TimeWindow, chart_axes, runs_of, window_of

from .factory import demo_snapshots, make_app, screen_text

# A minute of the demo machine, one sample a second.
SNAPSHOTS = demo_snapshots(4, 60)


def is_dot(cell: str) -> bool:
    return 0x2801 <= ord(cell) <= 0x28FF  # a braille cell with at least one dot


def chart_reading(lines: list[str], chart: HistoryChart) -> tuple[int, str, int]:
    """(the chart's width, its time-label line, the rightmost column holding a dot), within the chart."""
    region = chart.region
    rows = [line[region.x : region.right] for line in lines[region.y : region.bottom]]
    dots = [x for row in rows[1:-1] for x, cell in enumerate(row) if is_dot(cell)]
    return region.width, rows[-1], max(dots, default=-1)


async def test_now_is_at_the_right_edge_and_every_chart_shares_one_time_axis() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for snapshot in SNAPSHOTS:
            app.apply_snapshot(snapshot)
        await pilot.press("g")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        charts = {chart.id: chart_reading(lines, chart) for chart in app.screen.query(HistoryChart)}
        # The GPU's four charts and its three activity (GPM) charts.
        assert len(charts) == 7
        for name, (width, labels, last_dot) in charts.items():
            # 59 s of history on a one-minute axis that ends now, in the chart's last column.
            assert labels.split() == ["-60s", "-40s", "-20s", "now"], (name, labels)
            assert last_dot == width - 1, name
        # Memory (to 80 GiB) above utilization (to 100 %), temperature above power (to 750 W):
        # the same moment on the same column, however wide their values.
        assert charts["chart-memory"][1] == charts["chart-utilization"][1]
        assert charts["chart-temperature"][1] == charts["chart-power"][1]


def test_charts_given_the_same_times_share_a_window_even_where_a_series_has_gaps() -> None:
    times = [1000.0 + t for t in range(90)]
    window = window_of(times)
    assert window == TimeWindow(end=1089.0, span=120.0, step=20.0)
    # A series that stopped answering 30 s ago keeps the window; its points end where they end.
    values: list[float | None] = [50.0] * 60 + [None] * 30
    axes = chart_axes(runs_of(times, values), 100.0, 8, window)
    assert axes is not None and axes.window == window
    assert axes.runs[-1][-1] == (1059.0, 50.0)
    # Three hours of a longer history, a minute apart: a 4-hour axis back from the newest; the points
    # before its start are left out.
    long = [t * 60.0 for t in range(400)]
    axes = chart_axes(runs_of(long, [1.0] * 400), None, 8, window_of(long[-180:]))
    assert axes is not None and axes.window == TimeWindow(end=23940.0, span=14400.0, step=1800.0)
    assert axes.runs[0][0] == (9540.0, 1.0)
