"""The process panel: sort keys, filters, the cursor following its process."""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.user_pick import UserPickScreen
from gputop.ui.widgets.process_table import ProcessTable

from .factory import GIB, gpu, make_app, proc, snapshot, two_gpu_snapshot

SIZE = (120, 40)


def header(table: ProcessTable) -> str:
    return "".join(segment.text for segment in table.render_line(0))


def line(table: ProcessTable, row: int) -> str:
    return "".join(segment.text for segment in table.render_line(1 + row - table.scroll_offset.y))


async def start(app: GpuTopApp, pilot: Pilot[int]) -> ProcessTable:
    app.apply_snapshot(two_gpu_snapshot())
    await pilot.pause()
    return app.processes


async def test_default_order_is_gpu_memory_largest_first_ties_by_pid() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        assert table.pids() == [101, 102, 204, 203, 305]
        assert "GPU-MEM▼" in header(table)
        assert table.cursor_row is not None and table.cursor_row.process.pid == 101


async def test_sort_shortcuts_M_P_T_N() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("P")
        assert table.pids() == [102, 101, 204, 203, 305]  # CPU %, N/A last
        assert "CPU%▼" in header(table)
        await pilot.press("T")
        assert table.pids() == [102, 101, 204, 203, 305]  # run time, longest first
        assert "TIME▼" in header(table)
        await pilot.press("N")
        assert table.pids() == [101, 102, 203, 204, 305]
        assert "PID▲" in header(table)
        await pilot.press("M")
        assert table.pids() == [101, 102, 204, 203, 305]


async def test_I_inverts_the_order() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("I")
        assert table.pids() == [305, 203, 102, 204, 101]
        assert "GPU-MEM▲" in header(table)
        await pilot.press("I")
        assert table.pids() == [101, 102, 204, 203, 305]


async def test_greater_and_less_move_the_sort_column() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("greater_than_sign")  # GPU-MEM -> MEM% (share of the GPU's total)
        assert app.main.panel.sort.column == "share"
        assert table.pids() == [204, 101, 102, 203, 305]
        assert "MEM%▼" in header(table)
        await pilot.press("less_than_sign", "less_than_sign")  # -> T, ascending
        assert app.main.panel.sort.column == "type"
        assert table.pids() == [101, 102, 204, 305, 203]


async def test_clicking_a_header_sorts_by_it_and_again_inverts() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        # border (1) + tag gutter (1) + GPU (4) + space: PID spans x 7..13 of the widget.
        await pilot.click("#processes", offset=(10, 1))
        assert table.pids() == [101, 102, 203, 204, 305]
        assert "PID▲" in header(table)
        await pilot.click("#processes", offset=(10, 1))
        assert table.pids() == [305, 204, 203, 102, 101]
        assert "PID▼" in header(table)


async def test_not_visible_process_shows_pid_memory_and_why() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        text = line(table, 4)
        assert "305" in text and "1.0GiB" in text and "(not visible: other PID namespace)" in text
        assert "alice" not in text


async def test_mig_processes_show_gpu_dot_mig() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(2, [proc(7, 2, 3, mig=1), proc(8, 2, 2)])))
        await pilot.pause()
        table = app.processes
        assert [row.gpu_label for row in table.rows] == ["2.1", "2"]
        assert line(table, 0).split()[:2] == ["2.1", "7"]


async def test_filter_plain_text_matches_command_user_pid_container() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        for text, expected in (("ALICE", [101, 204]), ("vllm", [102]), ("203", [203]), ("docker", [102])):
            await pilot.press("slash")
            field = app.query_one("#filter-input")
            assert app.focused is field
            await pilot.press("ctrl+a", "ctrl+k", *text, "enter")
            assert table.pids() == expected, text
            assert app.focused is table
            assert table.cursor_row is not None and table.cursor_row.process.pid == expected[0]
            assert f"filter: /{text}" in str(table.border_title)


async def test_filter_regex_and_invalid_regex_keeps_last_good_filter() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("f4", *"re:^python (train|eval)")
        assert table.pids() == [101, 204]
        await pilot.press("ctrl+a", "ctrl+k", *"re:bob|eval[")
        error = app.query_one("#filter-error")
        assert str(error.content) == "invalid regular expression: unterminated character set at position 8"
        assert table.pids() == [102, 204]  # "re:bob|eval" was the last good filter
        await pilot.press("enter")  # refused: the box stays open
        assert app.focused is app.query_one("#filter-input")
        await pilot.press("escape")
        assert table.pids() == [101, 102, 204, 203, 305]
        assert app.query_one("#filter-bar").display is False
        assert str(error.content) == ""
        assert app.focused is table


async def test_escape_clears_an_applied_filter() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        assert "Clear filter" not in [key.description for key in app.query("FooterKey")]
        await pilot.press("slash", *"bob", "enter", "1")
        assert table.pids() == []
        assert table.empty_message == "no process matches the filter"
        await pilot.pause()
        assert "Clear filter" in [key.description for key in app.query("FooterKey")]
        await pilot.press("escape")
        assert table.pids() == [101, 102, 204, 203, 305]
        assert app.main.panel.filter.active is False


async def test_digit_shows_one_gpu_and_a_shows_all() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("1")
        assert table.pids() == [204, 203, 305]
        assert "GPU 1" in str(table.border_title)
        await pilot.press("0")
        assert table.pids() == [101, 102]
        await pilot.press("a")
        assert table.pids() == [101, 102, 204, 203, 305]


async def test_u_picks_a_user_all_first() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("u")
        assert isinstance(app.screen, UserPickScreen)
        assert app.screen.users == ["alice", "bob", "carol"]
        await pilot.press("down", "enter")
        assert table.pids() == [101, 204]
        assert "user alice" in str(table.border_title)
        await pilot.press("u", "up", "enter")
        assert table.pids() == [101, 102, 204, 203, 305]


async def test_cursor_follows_its_process_when_rows_reorder_appear_and_vanish() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.press("down", "down")
        assert table.cursor_row is not None and table.cursor_row.process.pid == 204
        app.apply_snapshot(two_gpu_snapshot(m204=60))  # 204 moves to the top
        await pilot.pause()
        assert table.pids() == [204, 101, 102, 203, 305]
        assert table.cursor_row.process.pid == 204
        bigger = two_gpu_snapshot(m204=60)
        newcomer = proc(406, 0, 70, "dave", "python big.py")
        bigger = snapshot(gpu(0, [*bigger.gpus[0].processes, newcomer]), bigger.gpus[1])
        app.apply_snapshot(bigger)
        await pilot.pause()
        assert table.pids() == [406, 204, 101, 102, 203, 305]
        assert table.cursor_row.process.pid == 204
        # The selected process leaves: the cursor stays at its place, on the next process.
        app.apply_snapshot(snapshot(gpu(0, bigger.gpus[0].processes), gpu(1, bigger.gpus[1].processes[:1])))
        await pilot.pause()
        assert table.pids() == [406, 101, 102, 203]
        assert table.cursor_row.process.pid == 101


async def test_scrolled_panel_does_not_jump_on_update() -> None:
    def many(extra_cpu: float) -> object:
        return snapshot(gpu(0, [proc(1000 + n, 0, 0.5 + n / 100, cpu=extra_cpu) for n in range(80)]))

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(many(1.0))  # type: ignore[arg-type]
        await pilot.pause()
        table = app.processes
        await pilot.press("pagedown", "pagedown", "down")
        selected = table.cursor_row
        offset = table.scroll_offset.y
        assert offset > 0 and selected is not None
        app.apply_snapshot(many(2.0))  # type: ignore[arg-type]
        await pilot.pause()
        assert table.scroll_offset.y == offset
        assert table.cursor_row is not None and table.cursor_row.process.pid == selected.process.pid
        assert table.cursor_row.process.cpu_percent == 2.0


async def test_clicking_a_row_selects_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        await pilot.click("#processes", offset=(30, 4))  # border, header, then rows 0, 1, 2
        assert table.cursor_row is not None and table.cursor_row.process.pid == 204


async def test_memory_share_is_of_the_gpus_total() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await start(app, pilot)
        assert [round(row.memory_share or 0) for row in table.rows] == [50, 25, 62, 12, 3]
        assert table.rows[0].process.gpu_memory == 40 * GIB


async def test_the_mouse_wheel_scrolls_the_panel_and_keeps_the_selection() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(1000 + n, 0, 0.5 + n / 100) for n in range(80)])))
        await pilot.pause()
        table = app.processes
        selected = table.cursor_row
        assert table.scroll_offset.y == 0 and selected is not None
        for _ in range(3):  # the wheel, where the terminal reports it: over the panel
            await pilot._post_mouse_events([events.MouseScrollDown], "#processes", offset=(30, 5))
        await pilot.pause()
        scrolled = table.scroll_offset.y
        assert scrolled > 0
        assert table.cursor_row is selected
        await pilot._post_mouse_events([events.MouseScrollUp], "#processes", offset=(30, 5))
        await pilot.pause()
        assert 0 <= table.scroll_offset.y < scrolled
