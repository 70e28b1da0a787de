"""Sorting is always visible: < > skip hidden columns, a hidden sort column is named in the panel title,
and columns with nothing to show leave their width to COMMAND."""

from __future__ import annotations

import pytest

from gputop.ui.app import GpuTopApp

from .factory import make_app, screen_text, two_gpu_snapshot


def header(app: GpuTopApp) -> list[str]:
    return "".join(segment.text for segment in app.processes.render_line(0)).split()


def panel_title(app: GpuTopApp) -> str:
    line = next(line for line in screen_text(app).splitlines() if "Processes" in line)
    return line[line.index("Processes") :].split("─")[0].strip()


async def test_at_80_columns_the_arrows_walk_only_the_columns_on_screen() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        shown = header(app)
        assert shown == ["GPU", "PID", "USER", "GPU-MEM▼", "SM%", "CPU%", "TIME", "COMMAND"]
        visited = []
        for _ in range(len(shown)):
            await pilot.press("greater_than_sign")
            visited.append(app.main.panel.sort.column)
            assert any(title.endswith(("▲", "▼")) for title in header(app)), header(app)
        assert visited == ["sm", "cpu", "time", "command", "gpu", "pid", "user", "gpu_memory"]
        await pilot.press("less_than_sign")
        assert app.main.panel.sort.column == "user"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_G_sorts_by_growth_and_says_so_where_the_column_is_not_shown(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("G")
        if size == (80, 24):
            assert "GROWTH▼" not in header(app)
            assert panel_title(app) == "Processes 5  sort: GROWTH▼"
        else:
            # The sort column shows even with nothing in it.
            assert "GROWTH▼" in header(app)
            assert panel_title(app) == "Processes 5"


async def test_empty_columns_leave_their_width_to_the_command() -> None:
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert "JOB" not in header(app)  # no process is in a batch job
        assert "CONTAINER" in header(app)  # two processes run in containers
        command_start = "".join(s.text for s in app.processes.render_line(0)).index("COMMAND")
        assert command_start < 160 - 40  # at least 40 columns of command


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_f6_opens_a_sort_menu_with_every_column(size: tuple[int, int]) -> None:
    from gputop.ui.screens.sort_pick import SortPickScreen

    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("f6")
        assert isinstance(app.screen, SortPickScreen)
        menu = screen_text(app)
        assert "Sort by" in menu and "GPU-MEM   ▼ now" in menu and "CONTAINER" in menu
        await pilot.press("down", "down", "enter")  # GPU-MEM -> MEM% -> GROWTH
        assert not isinstance(app.screen, SortPickScreen)
        assert app.main.panel.sort.column == "growth" and app.main.panel.sort.descending
        await pilot.press("f6", "escape")
        assert app.main.panel.sort.column == "growth"
