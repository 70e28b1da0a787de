"""A ``(no process)`` row is not a process (issue 26, point 7): it sorts by its memory, never takes the
cursor by itself nor by a cursor key (issue 34, point 8), a click selects it, Enter on it opens its GPU's
detail, ``k`` says it is not a process."""

from __future__ import annotations

import pytest

from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.process import ProcessScreen

from .factory import make_app, notices
from .test_diagnosis_ui import machine


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_no_process_row_sorts_by_memory_but_the_cursor_starts_on_a_process(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(machine(0))
        await pilot.pause()
        table = app.processes
        # GPU 0's 38.6 GiB nobody holds sorts above the 30 GiB hog: first, by its memory...
        assert table.rows[0].unattributed and table.rows[0].process.gpu_index == 0
        assert [row.process.pid for row in table.rows[1:]] == [101, 201, 102]
        # ...but the cursor is on the first process, and stays there as ticks come.
        assert table.cursor_row is not None and table.cursor_row.process.pid == 101
        app.apply_snapshot(machine(1))
        await pilot.pause()
        assert table.cursor_row is not None and table.cursor_row.process.pid == 101
        # Filtering to GPU 0 (its pseudo-row first): the cursor is on a process still.
        await pilot.press("0")
        await pilot.pause()
        assert table.rows[0].unattributed
        assert table.cursor_row is not None and not table.cursor_row.unattributed


async def test_enter_on_the_no_process_row_opens_its_gpu_and_k_says_it_is_not_a_process() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:  # the detail screen is slow to build: one size
        app.apply_snapshot(machine(0))
        await pilot.pause()
        table = app.processes
        await pilot.press("up")  # a key never stops on it...
        assert table.cursor_row is not None and table.cursor_row.process.pid == 101
        await pilot.click("#processes", offset=(10, 2))  # ...a click on it does (under the border and header)
        await pilot.pause()
        assert table.cursor_row is not None and table.cursor_row.unattributed
        await pilot.press("k")
        await pilot.pause()
        assert notices(app) == [
            "(no process) is not a process: memory no listed process holds; nothing to signal"
            " (Enter shows its GPU's causes)"
        ]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and not isinstance(app.screen, ProcessScreen)
        assert app.screen.index == 0
