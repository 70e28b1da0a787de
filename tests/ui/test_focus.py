"""Focus never traps: Tab has two stops on the main screen (the process panel and the GPU cards), the
chosen card is marked, arrows and Enter act on the panel unless the cards have the focus."""

from __future__ import annotations

import pytest

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.process_table import ProcessTable

from .factory import demo_snapshots, make_app, two_gpu_snapshot


def chosen(app: GpuTopApp) -> list[int]:
    return [card.index for card in app.query(GpuCard) if card.has_class("-chosen")]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_tab_goes_to_the_cards_and_back_and_arrows_follow_the_focus(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert isinstance(app.focused, ProcessTable) and chosen(app) == []
        await pilot.press("down")
        assert app.processes.cursor_row is not None and app.processes.cursor_row.process.pid == 102
        await pilot.press("tab")
        assert isinstance(app.focused, GpuGrid) and chosen(app) == [0]
        await pilot.press("down")  # moves among the cards now, not the processes
        assert chosen(app) == [1]
        assert app.processes.cursor_row.process.pid == 102
        await pilot.press("tab")  # two stops: back to the panel at once
        assert isinstance(app.focused, ProcessTable) and chosen(app) == []
        await pilot.press("down", "enter")  # the panel's cursor again: 204, and Enter opens it
        screen = app.screen
        assert isinstance(screen, ProcessScreen) and screen.identity[0] == 204


async def test_with_16_gpus_one_shift_tab_leaves_the_cards_and_esc_too() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for snapshot in demo_snapshots(16, 3):
            app.apply_snapshot(snapshot)
        await pilot.pause()
        await pilot.press("shift+tab")
        assert isinstance(app.focused, GpuGrid) and chosen(app) == [0]
        await pilot.press("end")
        assert chosen(app) == [15]
        await pilot.press("shift+tab")
        assert isinstance(app.focused, ProcessTable)
        await pilot.press("tab", "escape")
        assert isinstance(app.focused, ProcessTable)


async def test_enter_on_the_chosen_card_opens_that_gpu_whatever_process_is_selected() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("down", "down")  # 204, on GPU 1
        await pilot.press("tab", "enter")  # the first card: GPU 0
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 0
        await pilot.press("escape")
        assert isinstance(app.focused, GpuGrid) and chosen(app) == [0]
