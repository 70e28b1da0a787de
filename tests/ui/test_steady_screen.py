"""Stable and sensible (issue 34, point 8): the cursor stays on processes, columns do not come and go with
the data, ``g`` with nothing selected opens a GPU, and the palette lists gputop's actions only. Each at the
sizes a user meets, resizing between them."""

from __future__ import annotations

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen

from .factory import NOW, gpu, make_app, proc, screen_text, snapshot
from .test_diagnosis_ui import machine
from .test_views import _palette_titles

SIZES = [(120, 40), (80, 24), (80, 18), (60, 15), (40, 10)]


async def test_no_cursor_key_ever_stops_on_a_no_process_row() -> None:
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        app.apply_snapshot(machine(0))
        await pilot.pause()
        table = app.processes
        assert table.rows[0].unattributed  # GPU 0's 38.6 GiB nobody holds sorts first
        for size in SIZES:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            if size[1] < 12:
                continue  # 40x10: the panel has no room for rows at all (the cards take it)
            visited = []
            for key in ["home", "up", "down", "down", "down", "down", "up", "up", "up", "up", "pageup",
                        "pagedown", "end", "pageup", "home"]:
                await pilot.press(key)
                row = table.cursor_row
                assert row is not None and not row.unattributed, (size, key, visited)
                visited.append(row.process.pid)
            # Home and PgUp land on the first process, below the (no process) row; End on the last.
            assert visited[0] == visited[-1] == visited[-2] == 101, (size, visited)
            assert visited[12] == 102, (size, visited)
            assert [*dict.fromkeys(visited)] == [101, 201, 102], (size, visited)


def growing(tick: int):  # noqa: ANN201 - a Snapshot
    """PID 101 (1101 from tick 100, 2101 from 200: a new process) grows 1 GiB a tick, 8 s apart (steady
    from 30 s of history on); PID 102 flat."""
    leak = proc(101 + tick // 100 * 1000, 0, 10 + tick % 100, command="python leak.py")
    return snapshot(
        gpu(0, [leak, proc(102, 0, 5, "carol", "python serve.py")]),
        timestamp=NOW + tick * 8.0,
    )


def header_line(app: GpuTopApp) -> str:
    return "".join(segment.text for segment in app.processes.render_line(0))


async def test_no_column_appears_or_moves_when_a_process_starts_growing() -> None:
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        for start, size in zip(range(0, 300, 100), SIZES[:3], strict=False):
            await pilot.resize_terminal(*size)
            app.apply_snapshot(growing(start))  # a new leak: not growing yet
            await pilot.pause()
            assert not app.processes.rows[0].growing
            before = header_line(app)
            for tick in range(start + 1, start + 16):
                app.apply_snapshot(growing(tick))
            await pilot.pause()
            assert app.processes.rows[0].growing  # PID 101 grows...
            assert header_line(app) == before, size  # ...and no column came, went or moved
            if size == (120, 40):
                assert "GROWTH" in before and before.index("SM%") > before.index("GROWTH")


async def test_g_with_nothing_selected_opens_the_first_or_the_focused_gpu() -> None:
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        app.apply_snapshot(snapshot(gpu(0), gpu(1), gpu(2)))  # three idle GPUs: no process row
        await pilot.pause()
        for size in SIZES:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert app.processes.cursor_row is None
            await pilot.press("g")
            await pilot.pause()
            assert isinstance(app.screen, DetailScreen) and app.screen.index == 0, size
            assert "no process selected" not in screen_text(app)
            await pilot.press("escape")
            await pilot.pause()
        await pilot.resize_terminal(120, 40)
        await pilot.press("2")  # the panel shows GPU 2 only: g opens it
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 2


async def test_the_palette_lists_gputop_s_actions_only() -> None:
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        app.apply_snapshot(machine(0))
        await pilot.pause()
        for size in [(120, 40), (80, 24)]:
            await pilot.resize_terminal(*size)
            await pilot.press("ctrl+p")
            await pilot.pause()
            titles = await _palette_titles(app, pilot, "")  # nothing typed: every entry
            assert {"Kill", "Freeze", "GPU detail", "Quit"} <= set(titles), titles
            assert not {"Keys", "Theme", "Screenshot", "Maximize", "Minimize"} & set(titles), titles
            await pilot.press("escape")
            await pilot.pause()


async def test_no_column_appears_when_a_process_turns_idle() -> None:
    app = make_app()
    async with app.run_test(size=(130, 40)) as pilot:
        app.apply_snapshot(machine(0))
        await pilot.pause()
        before = header_line(app)
        for tick in range(1, 12):  # a minute apart: PID 101 idle for 10 minutes
            app.apply_snapshot(machine(tick))
        await pilot.pause()
        hog = next(row for row in app.processes.rows if row.process.pid == 101)
        assert hog.idle
        assert header_line(app) == before
        assert "IDLE" in before  # from 121 columns, idle or not
        for size in [(120, 40), (80, 24)]:  # a resize may change the columns: IDLE gives way first
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert "IDLE" not in header_line(app) and "SM%" in header_line(app)
