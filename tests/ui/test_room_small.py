"""Room at small sizes (issue 34, point 7) and chart axes that say their top in a unit that fits (point 8):
the GPU detail keeps its memory and temperature charts in view, a screen that leaves something out says
what, read from the screen's text at 120x40, 80x24, 80x18, 60x15 and 40x10, resizing with the screen open."""

from __future__ import annotations

from textual.pilot import Pilot

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.card_text import memory_pair

from .factory import NOW, StaticSource, demo_snapshots, gpu, make_app, proc, screen_text, snapshot
from .test_process_screen import open_vllm, source_with_detail

DEMO = demo_snapshots(4, 20)


def memory_and_temperature(app: GpuTopApp) -> list[str]:
    """The lines of the memory and temperature charts as the terminal shows them, title to time axis;
    the test fails if they are not whole on screen, above the footer."""
    lines = screen_text(app).splitlines()
    title = next((n for n, line in enumerate(lines) if "Memory used" in line and "Temperature" in line), None)
    assert title is not None, "\n".join(lines)
    axis = next((n for n in range(title + 1, len(lines)) if lines[n].count("now") == 2), None)
    assert axis is not None and axis < len(lines) - 1, "\n".join(lines)  # the footer is the last line
    return lines[title : axis + 1]


def out_of_view_line(app: GpuTopApp) -> str:
    """The line above the footer (where a screen says what it leaves out of view)."""
    return screen_text(app).splitlines()[-2]


async def open_detail(app: GpuTopApp, pilot: Pilot[int]) -> None:
    for demo in DEMO:
        app.apply_snapshot(demo)
    await pilot.pause()
    await pilot.press("g")
    await pilot.pause()
    assert isinstance(app.screen, DetailScreen)
    await pilot.pause()


async def test_the_detail_keeps_memory_and_temperature_in_view_from_the_start_and_after_every_resize() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_detail(app, pilot)  # a fresh start at 80x24 (today: a 3-line strip of axes)
        for size in [(80, 24), (120, 40), (80, 24), (80, 18), (60, 15), (120, 40), (80, 24)]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.pause()
            charts = memory_and_temperature(app)
            # Both charts label their top row and their 0, and plot at least 5 rows.
            assert charts[1].count("┤") == 2 and charts[-2].count("0┤") == 2, (size, charts)
            assert len(charts) >= 7, (size, charts)
            if size != (120, 40):  # the rest is below: the line above the footer names it
                below = out_of_view_line(app)
                assert below.startswith("↓ "), (size, below)
                assert "Memory used" not in below and "Temperature" not in below, (size, below)
            else:
                assert "↓" not in out_of_view_line(app)


async def test_the_detail_says_what_is_below_and_the_cursor_keys_bring_the_processes_into_view() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_detail(app, pilot)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        below = out_of_view_line(app)
        # 6 parts are below: utilization, power, the three activity charts and the processes (cut with …).
        assert below.startswith("↓ 6 more (scroll): Utilization, Power, SM active, Tensor active, DRAM"), below
        assert below.rstrip().endswith("…"), below
        assert "GPU-MEM" not in screen_text(app)
        await pilot.press("down")
        await pilot.pause()
        text = screen_text(app)
        assert "GPU-MEM" in text and "41210" in text  # the table, its header and GPU 1's first process
        assert "↑ " in out_of_view_line(app)  # the charts are now above, and the line says so
        await pilot.resize_terminal(40, 10)
        await pilot.pause()
        await pilot.pause()
        # At 40x10 the charts need scrolling: the line says so, the memory chart first among them.
        assert out_of_view_line(app).startswith("↓ "), screen_text(app)


async def test_the_process_screen_names_the_facts_and_charts_it_leaves_out() -> None:
    app = make_app(source_with_detail())
    async with app.run_test(size=(80, 24)) as pilot:
        await open_vllm(app, pilot)
        text = screen_text(app)
        bottom = next(line for line in text.splitlines() if line.startswith("╰"))
        # The facts box's border names what is below its last line (today: a one-cell scrollbar).
        assert "↓ 9 more (↓ scrolls): User, GPU 0, Host, Container, Directory, Parents, C…" in bottom, bottom
        for size in [(80, 18), (60, 15), (40, 10)]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.pause()
            assert isinstance(app.screen, ProcessScreen)
            line = out_of_view_line(app)
            assert line.startswith("↓ 4 more (scroll): GPU memory, SM"), (size, screen_text(app))
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        await pilot.pause()
        assert not out_of_view_line(app).startswith("↓")  # everything shows


def tiny(tick: int):  # noqa: ANN201 - a Snapshot
    """PID 7 holds 1.7 MiB of an H200's 141 GiB; PID 8 130 GiB (with the half GiB nobody holds: 130.5)."""
    processes = [proc(7, 0, 1.7 / 1024, command="python probe.py"), proc(8, 0, 130.0, "bob", "python big.py")]
    return snapshot(gpu(0, processes, total_gib=141, name="NVIDIA H200"), timestamp=NOW + tick)


def value_labels(lines: list[str], column: int) -> list[str]:
    """The value labels of the chart whose axis is left of ``column`` in ``lines``, top to bottom
    ('' where a row has none)."""
    return [line[:column].split("┤")[0].strip() if "┤" in line[:column] else "" for line in lines]


async def test_a_tiny_process_charts_in_mib_and_a_chart_labels_its_top() -> None:
    app = make_app(StaticSource())
    async with app.run_test(size=(120, 40)) as pilot:
        for tick in range(10):
            app.apply_snapshot(tiny(tick))
        await pilot.pause()
        assert app.processes.pids() == [8, 7]
        for size in [(120, 40), (80, 24)]:
            await pilot.resize_terminal(*size)
            await pilot.press("end", "enter")  # PID 7
            await pilot.pause()
            assert isinstance(app.screen, ProcessScreen)
            lines = screen_text(app).splitlines()
            title = next(n for n, line in enumerate(lines) if "GPU memory" in line)
            assert "GPU memory (MiB)" in lines[title], lines[title]
            labels = value_labels(lines[title + 1 :], size[0] // 2)
            labels = labels[: labels.index("0") + 1]
            # 1.7 MiB on an axis to 2 MiB: its top labelled, no 0.0005 GiB ticks.
            assert labels[0] == "2" and labels[-1] == "0", labels
            assert all(label in ("", "0", "1", "2") for label in labels), labels
            await pilot.press("escape", "home", "g")  # GPU 0's detail: 130.5 of 141 GiB
            await pilot.pause()
            await pilot.pause()
            charts = memory_and_temperature(app)
            top = charts[1].split("┤")[0].strip()
            assert charts[0].count("Memory used (GiB)") == 1
            assert top != "" and float(top) >= 141, charts  # no line drawn above the highest label
            await pilot.press("escape")
            await pilot.pause()


async def test_at_40x10_every_gpu_shows_its_memory_on_a_line_of_its_own() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for demo in DEMO:
            app.apply_snapshot(demo)
        for size in [(40, 10), (80, 24), (40, 10), (60, 15)]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.pause()
            lines = screen_text(app).splitlines()
            for gpu_sample in DEMO[-1].gpus:  # 4 GPUs, GPU 2 with MIG devices (its MIG line folds at 40x10)
                figure = memory_pair(gpu_sample.memory_used, gpu_sample.memory_total, short=True)
                mine = [line for line in lines if line.startswith(f"{gpu_sample.index:>3} ")]
                assert len(mine) == 1 and figure in mine[0], (size, gpu_sample.index, figure, lines)
            assert "GPU-MEM" in screen_text(app)  # the panel keeps its header and a row
            assert app.processes.size.height >= 2


def shown_gpus(app: GpuTopApp) -> set[int]:
    """The GPUs whose compact line is on screen."""
    return {int(line[:3]) for line in screen_text(app).splitlines() if line[:3].strip().isdigit()}


async def test_a_gpu_out_of_view_is_named_under_the_cards() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for demo in demo_snapshots(16, 20):
            app.apply_snapshot(demo)
        for size in [(60, 15), (80, 24), (80, 18), (40, 10), (60, 15)]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.pause()
            hidden = sorted(set(range(16)) - shown_gpus(app))
            assert hidden, size
            lines = screen_text(app).splitlines()
            more = next((line.strip() for line in lines if "GPU" in line and "↓" in line), "")
            named = f"+{len(hidden)} GPUs ↓ ({', '.join(map(str, hidden))})"
            # The whole list where it fits, else cut with … after its count.
            assert more == named or (more.endswith("…") and named.startswith(more[:-1])), (size, more, hidden)
        app.screen.query_one("#gpu-area").scroll_end(animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app).splitlines()
        above = sorted(set(range(16)) - shown_gpus(app))
        assert any(line.strip().startswith(f"{len(above)} ↑ (0, 1") for line in lines), lines


async def test_8_busy_gpus_at_120x40_leave_15_process_rows_in_either_form() -> None:
    from .test_layout_room import form, machine, rows_on_screen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(machine(8, 3))  # 24 processes
        await pilot.pause()
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("full", 15)
        await pilot.press("c")
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("compact", 24)
