"""The process panel draws its finished lines itself, and they are Textual's, segment for segment
(issue 36, item 5).

A changed line of the panel went through Textual's styles cache (border, background, the scrollbar's
gutter, filters) at ~70 us, against ~28 us to build the line. The panel now takes what goes around its
lines from Textual's own drawing of it once (``card_frame``, as the cards do) and sets each changed line
in it: inside the scrollbar when there is one, the cells under the scrollbar being those Textual drew.
Here, after ticks that change the figures (so the lines are the panel's own, not the drawing it took), the
panel is compared with Textual drawing it afresh in every state: focused or not, the cursor moved, rows
tagged, hidden and stale rows, scrolled, with and without a scrollbar, the empty message, under NO_COLOR's
monochrome filter and the terminal's ANSI colours.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from gputop.core.model import Snapshot
from gputop.ui.app import GpuTopApp
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.widgets.process_table import ProcessTable

from .factory import NOW, gpu, make_app, proc, snapshot

SIZE = (120, 40)


def machine(tick: int, processes: int) -> Snapshot:
    """Two GPUs and ``processes`` processes whose CPU moves each tick; the second one hidden (another PID
    namespace), the third one stale (last seen)."""
    cpu = 5.0 + (tick * 7) % 60
    rows = [proc(1000 + n, n % 2, 1.0 + n, cpu=cpu + n, command=f"python train_{n}.py") for n in range(processes)]
    if processes > 2:
        rows[1] = proc(1001, 1, 2.0, visible=False)
        rows[2] = replace(rows[2], stale=True)
    return snapshot(gpu(0, [p for p in rows if p.gpu_index == 0]), gpu(1, [p for p in rows if p.gpu_index == 1]),
                    timestamp=NOW + tick)


def segments(strips: list[Strip]) -> list[list[Segment]]:
    return [list(strip) for strip in strips]


def assert_drawn_as_textual_draws(app: GpuTopApp, panel: ProcessTable | None = None) -> str:
    """The panel's lines (or another table's) as it draws them equal Textual's drawing of it afresh, whole
    and in part; says the table's state (focused, scrollbar, scrolled)."""
    panel = app.query_one(ProcessPanel) if panel is None else panel
    whole = Region(0, 0, *panel.outer_size)
    own = segments(panel.render_lines(whole))
    panel.refresh()  # Textual's styles cache forgets the panel: what follows is drawn from the styles
    assert own == segments(Widget.render_lines(panel, whole))
    # Part of it, as the compositor asks for it where another widget covers the rest.
    part = Region(3, 1, panel.outer_size.width - 5, panel.outer_size.height - 2)
    assert segments(panel.render_lines(part)) == segments(Widget.render_lines(panel, part))
    return f"focus={panel.has_focus} scrollbar={panel.scrollbar_size_vertical} top={panel.scroll_offset.y}"


async def moved(app: GpuTopApp, pilot: object, tick: int, processes: int) -> int:
    """Two ticks whose figures differ, each drawn: the lines drawn after the first are the panel's own."""
    for step in (tick, tick + 1):
        app.apply_snapshot(machine(step, processes))
        await pilot.pause()  # type: ignore[attr-defined]
    return tick + 2


async def run_through_the_states(app: GpuTopApp, processes: int) -> list[str]:
    seen = []
    async with app.run_test(size=SIZE) as pilot:
        tick = await moved(app, pilot, 0, processes)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("down", "down", "space", "space")  # the cursor on a hidden row, two rows tagged
        tick = await moved(app, pilot, tick, processes)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("end")  # the last row: scrolled where there is a scrollbar
        tick = await moved(app, pilot, tick, processes)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("tab")  # the cards take the focus: the panel's border and cursor in other colours
        tick = await moved(app, pilot, tick, processes)
        seen.append(assert_drawn_as_textual_draws(app))
        app.ansi_color = True  # the terminal's own colours: Textual's colour filter
        tick = await moved(app, pilot, tick, processes)
        seen.append(assert_drawn_as_textual_draws(app))
        app.ansi_color = False
        app.apply_snapshot(snapshot(gpu(0), gpu(1), timestamp=NOW + tick))  # no process: the empty message
        await pilot.pause()
        seen.append(assert_drawn_as_textual_draws(app))
    return seen


async def test_the_panel_with_a_scrollbar_draws_what_textual_draws() -> None:
    seen = await run_through_the_states(make_app(), processes=60)
    assert seen[0] == "focus=True scrollbar=1 top=0"
    assert seen[2].startswith("focus=True scrollbar=1 top=") and not seen[2].endswith("top=0")
    assert seen[3].startswith("focus=False scrollbar=1")
    assert seen[5] == "focus=False scrollbar=0 top=0"


async def test_the_panel_without_a_scrollbar_draws_what_textual_draws() -> None:
    seen = await run_through_the_states(make_app(), processes=6)
    assert seen[:3] == ["focus=True scrollbar=0 top=0"] * 3


async def test_the_panel_draws_what_textual_draws_without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")  # Textual's monochrome filter on every line; the cursor underlined
    seen = await run_through_the_states(make_app(), processes=60)
    assert seen[0] == "focus=True scrollbar=1 top=0"


async def test_a_changed_panel_line_is_not_drawn_through_textuals_styles() -> None:
    app = make_app()
    drawn: Counter[str] = Counter()
    original = Widget.render_lines

    def counting(self: Widget, crop: Region) -> list[Strip]:
        if isinstance(self, ProcessPanel):
            drawn[str(crop.height)] += 1
        return original(self, crop)

    async with app.run_test(size=SIZE) as pilot:
        tick = await moved(app, pilot, 0, 60)
        panel = app.query_one(ProcessPanel)
        Widget.render_lines = counting  # type: ignore[method-assign]
        try:
            before = list(panel.render_lines(Region(0, 0, *panel.outer_size)))
            tick = await moved(app, pilot, tick, 60)
            after = list(panel.render_lines(Region(0, 0, *panel.outer_size)))
            assert before != after  # the CPU column moved on every row: lines drawn again
            assert not drawn  # each set in the panel's frame, none through Textual's styles
            await pilot.press("down", "down")  # the cursor moved: two lines, the same
            assert not drawn
            panel.styles.tint = "red 40%"  # a tint: Textual draws the panel
            tick = await moved(app, pilot, tick, 60)
            assert drawn
            assert_drawn_as_textual_draws(app)
        finally:
            Widget.render_lines = original  # type: ignore[method-assign]


async def test_the_gpu_detail_screen_s_table_draws_what_textual_draws() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tick = await moved(app, pilot, 0, 60)
        await pilot.press("g")  # GPU 0's detail, with its own process table
        await pilot.pause()
        tables = [table for table in app.screen.query(ProcessTable) if not isinstance(table, ProcessPanel)]
        assert len(tables) == 1
        await moved(app, pilot, tick, 60)
        assert tables[0]._frame is not None  # its lines set in its frame, not Textual's drawing
        assert_drawn_as_textual_draws(app, tables[0])
