"""In the tree, the cursor and the view stay on the selected line as the rows re-sort under it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gputop.ui.app import GpuTopApp

from .factory import gpu, make_app, proc, snapshot


def jobs(tick: int):  # type: ignore[no-untyped-def]
    """Three torchrun jobs (launchers 100, 200, 300, two workers each) and eight lone processes; the
    jobs' memory changes each tick, so their subtrees change places."""
    order = [(100, 200, 300), (300, 100, 200), (200, 300, 100)][tick % 3]
    processes = []
    for rank, launcher in enumerate(order):
        gib = 30 - 10 * rank
        for worker in (1, 2):
            sample = proc(launcher + worker, worker % 2, gib / worker, command=f"python train.py --local-rank {worker}")
            processes.append(replace(sample, parent_pid=launcher, parent_command=f"torchrun job{launcher}.py"))
    processes += [proc(900 + n, n % 2, 5 - n / 2, "bob", "python lone.py") for n in range(8)]
    return snapshot(*(gpu(index, [p for p in processes if p.gpu_index == index]) for index in (0, 1)))


def screen_line(app: GpuTopApp) -> int:
    table = app.processes
    index = table.cursor_index
    assert index is not None
    return index - table.scroll_offset.y


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_selected_launcher_keeps_its_line_as_the_jobs_change_places(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(jobs(0))
        await pilot.pause()
        await pilot.press("t")
        table = app.processes
        assert table.pids()[:9] == [100, 101, 102, 200, 201, 202, 300, 301, 302]
        await pilot.press("home", *["down"] * 6)  # launcher 300, the third job
        assert table.cursor_row is not None and table.cursor_row.process.pid == 300
        line = screen_line(app)
        for tick in (1, 2, 3):
            app.apply_snapshot(jobs(tick))
            await pilot.pause()
            assert table.cursor_row is not None and table.cursor_row.process.pid == 300
            assert table.cursor_row.launcher
            # It keeps its line on screen, unless the list's ends do not let it (it cannot sit below
            # the rows above it, nor the view scroll past the last row).
            index, last_top = table.pids().index(300), max(0, len(table.rows) + 1 - table.size.height)
            expected = index - max(0, min(index - line, last_top))
            assert screen_line(app) == expected, tick
            assert 0 <= expected < table.size.height - 1  # on screen, below the header
            line = expected
