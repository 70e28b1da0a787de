"""A row whose TIME, GROWTH or IDLE alone moved is drawn from its kept line, those cells set in it again
(issue 36, item 5): on a tick whose processes did not change every row on screen moves its TIME and nothing
else, and building each line afresh was most of the panel's drawing. What is drawn stays exactly what Textual
draws afresh, with each cell's new value in its own style; a row whose style or other cells changed is built
again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType

import pytest

from gputop.core.analysis.diagnosis import Diagnoses, ProcessDiagnosis
from gputop.core.analysis.forecast import ProcessGrowth
from gputop.core.model import Snapshot
from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.table_line import Line

from .factory import NOW, make_app, screen_text
from .test_panel_finished_lines import assert_drawn_as_textual_draws, machine

SIZE = (140, 40)  # wide enough for GROWTH and IDLE beside the other columns
STARTED = NOW - 60.0  # every process of ``machine`` started a minute before NOW


def still(shot: Snapshot, seconds: float) -> Snapshot:
    """The same machine ``seconds`` later, every GPU and process the same object (as the sampler keeps them)."""
    return replace(shot, timestamp=shot.timestamp + seconds)


def lines_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the table lines built from here on (a row's or the header's, cell by cell)."""
    built = [0]
    original: Callable[..., None] = Line.__init__

    def counting(self: Line, *args: object) -> None:
        built[0] += 1
        original(self, *args)

    monkeypatch.setattr(Line, "__init__", counting)
    return built


def panel_line(app: GpuTopApp, pid: int) -> str:
    return next(line for line in screen_text(app).splitlines() if f" {pid} " in line)


async def test_a_tick_where_only_the_clock_moved_builds_no_row_line_and_shows_each_row_s_new_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app()
    shot = machine(0, 6)  # six processes; 1001 hidden (another PID namespace), 1002 stale (last seen)
    async with app.run_test(size=SIZE) as pilot:
        for seconds in (0, 1):
            app.apply_snapshot(still(shot, seconds))
            await pilot.pause()
        assert "1m01s" in panel_line(app, 1000)
        built = lines_built(monkeypatch)
        app.apply_snapshot(still(shot, 2))
        await pilot.pause()
        assert built[0] == 0  # five rows moved their TIME on: each set in its kept line
        for pid in (1000, 1002, 1003, 1004, 1005):
            assert "1m02s" in panel_line(app, pid), pid
        assert "1m0" not in panel_line(app, 1001)  # a hidden process shows no TIME
        await pilot.press("down")  # the cursor moved: the two rows' styles changed, their lines built again
        assert built[0] == 2
        app.apply_snapshot(still(shot, 3))
        await pilot.pause()
        assert built[0] == 2 and "1m03s" in panel_line(app, 1000)
        assert_drawn_as_textual_draws(app)  # (which refreshes the panel whole: its lines are all built again)


async def test_a_kept_line_shows_growth_and_idleness_as_they_move_each_in_its_style(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app()
    shot = machine(0, 6)
    panel = app.processes

    def show(seconds: float, growth: ProcessGrowth | None, idle_s: float) -> None:
        """1000 growing at ``growth`` (None: not known), 1003 idle for ``idle_s`` seconds."""
        grown = {} if growth is None else {(1000, STARTED): growth}
        idle = {(1003, STARTED): ProcessDiagnosis(idle_s, True, 1 << 30)}
        diagnoses = Diagnoses(MappingProxyType({}), MappingProxyType({}), MappingProxyType(idle))
        panel.show(still(shot, seconds), MappingProxyType(grown), diagnoses)

    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(shot)
        assert {"growth", "idle", "time"} <= set(panel.shown_columns)
        show(0, ProcessGrowth(1e6, True), 900.0)
        await pilot.pause()
        show(1, ProcessGrowth(1e6, True), 901.0)
        await pilot.pause()
        assert "+57.2MiB/min" in panel_line(app, 1000) and "idle 15m" in panel_line(app, 1003)
        built = lines_built(monkeypatch)
        # The growth rate doubles and the idle time crosses a minute: the cells move, in their styles.
        show(60, ProcessGrowth(2e6, True), 960.0)
        await pilot.pause()
        assert built[0] == 0
        assert "+114.4MiB/min" in panel_line(app, 1000) and "2m00s" in panel_line(app, 1000)
        assert "idle 16m" in panel_line(app, 1003) and "2m00s" in panel_line(app, 1003)
        assert_drawn_as_textual_draws(app)  # (which refreshes the panel whole: its lines are all built again)
        show(61, ProcessGrowth(2e6, True), 961.0)
        await pilot.pause()
        built[0] = 0
        # 1000 stops growing: its GROWTH cell is emptied and loses its style, so its line is built again.
        show(62, ProcessGrowth(0.0, False), 962.0)
        await pilot.pause()
        assert built[0] == 1
        assert "MiB/min" not in panel_line(app, 1000) and "2m02s" in panel_line(app, 1000)
        assert_drawn_as_textual_draws(app)
