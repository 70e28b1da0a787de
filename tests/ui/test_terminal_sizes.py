"""Small and changing terminals: nothing crashes; where nothing fits, a short "terminal too small"."""

from __future__ import annotations

import pytest

from gputop.ui.app import GpuTopApp
from gputop.ui.layout import MIN_HEIGHT, MIN_WIDTH
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.help import HelpScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.user_pick import UserPickScreen

from .factory import demo_snapshots, make_app

TOO_SMALL = f"terminal too small (need {MIN_WIDTH}x{MIN_HEIGHT})"


def rendered(app: GpuTopApp) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


def fed(gpus: int = 4, ticks: int = 30) -> GpuTopApp:
    app = make_app()
    for snapshot in demo_snapshots(gpus, ticks):
        app.apply_snapshot(snapshot)
    return app


async def test_40x10_shows_the_title_and_the_process_panel() -> None:
    app = fed()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        screen = rendered(app)
        assert "gputop" in screen and "Processes" in screen
        assert "too small" not in screen


@pytest.mark.parametrize("size", [(39, 10), (40, 9), (20, 5), (1, 1)])
async def test_below_40x10_says_the_terminal_is_too_small(size: tuple[int, int]) -> None:
    app = fed()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = rendered(app)
        assert "Processes" not in screen
        width, height = size
        if width >= len(TOO_SMALL):
            assert TOO_SMALL in screen
        else:
            assert "terminal" in screen.replace("\n", " ") or height * width < len("terminal")


@pytest.mark.parametrize("opened", ["detail", "kill", "help", "user"])
async def test_every_screen_survives_a_tiny_terminal_and_comes_back(opened: str) -> None:
    app = fed()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press({"detail": "g", "kill": "k", "help": "f1", "user": "u"}[opened])
        await pilot.pause()
        expected = {"detail": DetailScreen, "kill": KillScreen, "help": HelpScreen, "user": UserPickScreen}[opened]
        assert isinstance(app.screen, expected)
        # The kill dialog's signal list used to crash Textual below 6 columns (it cannot wrap into 0 cells).
        for size in [(20, 5), (1, 1), (5, 5), (40, 10), (3, 60), (200, 2)]:
            await pilot.resize_terminal(*size)
            app.apply_snapshot(demo_snapshots(4, 31)[-1])
            await pilot.pause()
            rendered(app)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert isinstance(app.screen, expected)
        assert app.is_running
