"""The GPU detail screen: opened by g, Enter on a card or a click on a card; charts the session history."""

from __future__ import annotations

from dataclasses import replace

from textual.pilot import Pilot
from textual_plotext import PlotextPlot

from gputop.core.model import Snapshot
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.sort_pick import SortPickScreen
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.rows import SortOrder

from .factory import NOW, RecordingSource, kill_targets, make_app, notices, two_gpu_snapshot

SIZE = (120, 40)


async def test_g_opens_the_detail_of_the_selected_process_gpu() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for n in range(3):
            app.apply_snapshot(_at(n))
        await pilot.pause()
        await pilot.press("down", "down", "g")  # 204, on GPU 1
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.index == 1
        await pilot.pause()
        assert screen.query_one("#detail-processes", ProcessTable).pids() == [204, 203, 305]
        title = str(screen.query_one("#detail-title").content)
        assert "GPU 1" in title and "NVIDIA GeForce RTX 4090" in title
        assert len(app.history.gpu(1).timestamps) == 3
        assert len(screen.query(PlotextPlot)) == 4
        # Live: a new tick updates the detail screen too.
        app.apply_snapshot(_at(3, m204=22))
        await pilot.pause()
        table = screen.query_one("#detail-processes", ProcessTable)
        assert table.rows[0].process.gpu_memory == 22 * 1024**3
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)


async def test_clicking_a_card_opens_its_detail() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await gpu_1_detail(app, pilot)
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 1


async def test_enter_on_a_focused_card_opens_its_detail() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(_at(0))
        await pilot.pause()
        await pilot.press("tab", "right", "enter")  # the cards, the second one, open it
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 1


async def gpu_1_detail(app: GpuTopApp, pilot: Pilot[int]) -> None:
    """One tick, then a click on GPU 1's card: its detail screen."""
    app.apply_snapshot(_at(0))
    await pilot.pause()
    await pilot.click("#gpu-1")


def _at(step: int, **changes: float) -> Snapshot:
    return replace(two_gpu_snapshot(**changes), timestamp=NOW + step)


async def test_kill_on_the_detail_screen_targets_its_selected_process() -> None:
    source = RecordingSource()
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await gpu_1_detail(app, pilot)
        await pilot.press("down", "k")  # the detail table lists 204, 203, 305: 203 is selected
        assert isinstance(app.screen, KillScreen)
        assert kill_targets(app).split()[:2] == ["PID", "203"]
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert [identity[0] for identity, _signal in source.sent] == [203]


async def test_the_sort_keys_on_the_detail_screen_sort_its_table_at_once_and_the_panel_follows() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await gpu_1_detail(app, pilot)
        table = app.screen.query_one("#detail-processes", ProcessTable)
        assert table.pids() == [204, 203, 305]
        await pilot.press("N")  # no tick comes: the table sorts itself
        assert table.pids() == [203, 204, 305] and app.processes.sort == SortOrder("pid", False)
        await pilot.press("f6")
        assert isinstance(app.screen, SortPickScreen)
        app.screen.dismiss("gpu_memory")
        await pilot.pause()
        assert table.pids() == [204, 203, 305] and app.processes.sort == SortOrder("gpu_memory", True)
        await pilot.press("I", "escape")
        assert app.processes.pids() == [305, 203, 102, 204, 101]  # the panel in the order chosen there


async def test_k_on_the_detail_screen_in_read_only_mode_says_why_and_signals_nothing() -> None:
    source = RecordingSource()
    app = make_app(source, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        await gpu_1_detail(app, pilot)
        await pilot.press("space", "k")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.query_one("#detail-processes", ProcessTable).tagged == set()
        assert notices(app) == ["read-only (--readonly): gputop sends no signals"]
        assert source.sent == []
