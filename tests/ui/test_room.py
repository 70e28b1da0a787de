"""Room for processes: at least 5 process rows at every size from 80x24, 16 GPUs included; hiding
the panel gives the cards the room."""

from __future__ import annotations

import pytest

from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import demo_snapshots, make_app

SNAPSHOTS = {count: demo_snapshots(count, 20) for count in (4, 8, 16)}


def rows_on_screen(app: GpuTopApp) -> int:
    table = app.processes
    return min(len(table.rows), table.size.height - 1)  # the header takes a line


@pytest.mark.parametrize("gpus", [4, 8, 16])
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40), (200, 60)])
async def test_the_panel_keeps_five_rows(gpus: int, size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        for snapshot in SNAPSHOTS[gpus]:
            app.apply_snapshot(snapshot)
        await pilot.pause()
        assert len(app.processes.rows) >= 5
        assert rows_on_screen(app) >= 5, (gpus, size, app.processes.size)


async def test_p_hides_the_panel_and_the_cards_take_the_room() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for snapshot in SNAPSHOTS[16]:
            app.apply_snapshot(snapshot)
        await pilot.pause()
        area = app.query_one("#gpu-area")
        assert area.outer_size.height == 24 - 3 - 7  # the cards scroll: 5 process rows below them
        assert area.virtual_size.height > area.size.height
        await pilot.press("p")
        await pilot.pause()
        assert not app.processes.display
        # All 16 cards (and GPU 2's MIG line) show at once, nothing to scroll.
        assert area.virtual_size.height == area.size.height == 17
        await pilot.press("p")
        await pilot.pause()
        assert rows_on_screen(app) >= 5


async def test_with_8_gpus_at_100x30_hiding_the_panel_unfolds_the_cards() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        for snapshot in SNAPSHOTS[8]:
            app.apply_snapshot(snapshot)
        await pilot.pause()
        assert all(card.compact for card in app.query(GpuCard))
        await pilot.press("p")
        await pilot.pause()
        assert not any(card.compact for card in app.query(GpuCard))
