"""What a tick costs the UI thread stays in proportion to what changed (issue 36, item 5): a widget asks
Textual once a tick for the lines that changed (the cards, all together, through the grid under them),
the panel works out its width once a tick however many rows it has, and the cards' room is planned again
only when what a card shows changed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.geometry import Region, Size
from textual.pilot import Pilot
from textual.widget import Widget

from gputop.ui import layout
from gputop.ui.app import GpuTopApp
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.terminal.textual_private import frame_pieces
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.rows import COLUMN_BY_NAME, ProcessRow
from gputop.ui.widgets.table_line import same_but_time

from .factory import HOST, NOW, gpu, make_app, proc, screen_text, snapshot

SIZE = (120, 40)
FILL_TICKS = 30  # more ticks than a sparkline is wide at 120 columns: then they stay as they are


def machine(seconds: float, *, per_gpu: int = 2, cpu_101: float = 10.0, temp_1: float = 60.0) -> object:
    """Four GPUs, ``per_gpu`` processes each, all started two hours ago (their TIME, 2h00m, holds for a
    minute); process 101's CPU and GPU 1's temperature as given."""
    gpus = [
        gpu(
            index,
            [proc(100 + 10 * index + n, index, 4.0, age_s=7200, cpu=cpu_101 if 10 * index + n == 1 else 10.0)
             for n in range(1, per_gpu + 1)],
            temperature=temp_1 if index == 1 else 60.0,
        )
        for index in range(4)
    ]
    return replace(snapshot(*gpus, timestamp=NOW + seconds), host=HOST)


async def shown(app: GpuTopApp, pilot: Pilot[object], ticks: int) -> None:
    """``ticks`` ticks of the same machine, one a second, on screen."""
    for tick in range(ticks):
        app.apply_snapshot(machine(tick))  # type: ignore[arg-type]
    await pilot.pause()


class Refreshes:
    """Each ``refresh`` call a widget of ``kind`` makes from now on: the widget and the regions it names."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kind: type[Widget] | tuple[type[Widget], ...]) -> None:
        self.calls: list[tuple[Widget, tuple[Region, ...]]] = []
        refresh = Widget.refresh

        def counted(widget: Widget, *regions: Region, **options: bool) -> Widget:
            if isinstance(widget, kind):
                self.calls.append((widget, regions))
            return refresh(widget, *regions, **options)

        monkeypatch.setattr(Widget, "refresh", counted)


async def test_two_changed_process_rows_are_asked_for_in_one_refresh_of_those_two_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await shown(app, pilot, 3)
        panel = app.query_one(ProcessPanel)
        rows = panel.pids()
        refreshes = Refreshes(monkeypatch, ProcessPanel)
        # 101 at 55 % of a CPU, 101's neighbour 102 unchanged; 121 too (a row further down).
        changed = machine(3, cpu_101=55.0)
        gpus = list(changed.gpus)  # type: ignore[attr-defined]
        gpus[2] = replace(gpus[2], processes=(replace(gpus[2].processes[0], cpu_percent=77.0), gpus[2].processes[1]))
        app.apply_snapshot(replace(changed, gpus=tuple(gpus)))  # type: ignore[arg-type]
        width = panel.scrollable_size.width
        assert refreshes.calls == [
            (panel, (Region(0, 1 + rows.index(101), width, 1), Region(0, 1 + rows.index(121), width, 1)))
        ]
        await pilot.pause()
        text = "".join(segment.text for segment in panel.render_line(1 + rows.index(121)))
        assert " 77.0 " in text  # the changed figure is drawn on this tick's frame


class Frames:
    """What the terminal is sent from now on, frame after frame (each whole or its changed lines), laid
    over what the screen showed when this began: the cells a user sees."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, app: GpuTopApp) -> None:
        self.rows = [list(row) for row in screen_text(app).split("\n")]
        display = app._display

        def shown(screen: object, renderable: object) -> None:
            for x, y, strip, cells in frame_pieces(renderable) or ():
                text = "".join(segment.text for segment in strip)[:cells]
                self.rows[y][x : x + len(text)] = list(text)
            display(screen, renderable)  # type: ignore[arg-type]

        monkeypatch.setattr(app, "_display", shown)

    @property
    def text(self) -> str:
        return "\n".join("".join(row) for row in self.rows)


def card_lines_in_grid(card: GpuCard, *lines: int) -> tuple[Region, ...]:
    """Lines of a card's content, as regions of the grid's content it sits in."""
    grid = card.app.query_one(GpuGrid)
    x, y = card.content_region.offset - grid.content_region.offset
    return tuple(Region(x, y + line, card.content_size.width, 1) for line in lines)


def busier(utilization: dict[int, float], temp_1: float = 60.0) -> object:
    """The machine a tick after the fill, the GPUs named at these utilizations (and GPU 1 at ``temp_1``)."""
    tick = machine(FILL_TICKS, temp_1=temp_1)
    gpus = list(tick.gpus)  # type: ignore[attr-defined]
    for index, percent in utilization.items():
        gpus[index] = replace(gpus[index], utilization_gpu=percent)
    return replace(tick, gpus=tuple(gpus))  # type: ignore[type-var]


@pytest.mark.parametrize(
    ("utilization", "temp_1", "lines"),
    [
        ({1: 93.0}, 75.0, {1: (1, 2)}),  # UTIL (line 1) and TEMP (line 2) of GPU 1's card
        ({0: 91.0, 2: 93.0, 3: 94.0}, 60.0, {0: (1,), 2: (1,), 3: (1,)}),  # UTIL of three cards
    ],
)
async def test_the_changed_lines_of_every_card_of_a_tick_are_asked_for_in_one_refresh(
    monkeypatch: pytest.MonkeyPatch, utilization: dict[int, float], temp_1: float, lines: dict[int, tuple[int, ...]],
) -> None:
    # A refresh costs each widget a message to itself and the screen one more: the cards' changed lines
    # are asked for together, by the grid they are drawn over, however many cards changed; no card asks.
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await shown(app, pilot, FILL_TICKS)
        cards = {index: app.query_one(f"#gpu-{index}", GpuCard) for index in lines}
        refreshes, frames = Refreshes(monkeypatch, (GpuCard, GpuGrid)), Frames(monkeypatch, app)
        app.apply_snapshot(busier(utilization, temp_1=temp_1))  # type: ignore[arg-type]
        expected = tuple(region for index, card in cards.items() for region in card_lines_in_grid(card, *lines[index]))
        assert refreshes.calls == [(app.query_one(GpuGrid), expected)]
        await pilot.pause()
        text = screen_text(app)
        assert all(f"{percent:.0f}%" in text for percent in utilization.values())
        assert (f"{temp_1:.0f}°C" in text) and frames.text == text  # the terminal was sent them, where they are


async def test_the_panel_asks_for_its_width_as_often_with_sixty_rows_as_with_eight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The width inside the scrollbar (and the COMMAND column's, from it) is the same for every row of a
    tick: Textual works it out anew each time it is asked, so it is asked once a tick, not once a row."""
    asked: list[int] = []
    scrollable_size = Widget.scrollable_size

    def counted(widget: Widget) -> Size:
        if isinstance(widget, ProcessPanel):
            asked.append(1)
        return scrollable_size.fget(widget)  # type: ignore[attr-defined,no-any-return]

    counts = []
    for per_gpu in (2, 15):
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            for tick in range(2):
                app.apply_snapshot(machine(tick, per_gpu=per_gpu))  # type: ignore[arg-type]
                # Each drawn: the scrollbar that came with the rows, the focus, are drawn whole before the tick counted.
                await pilot.pause()
            with monkeypatch.context() as patch:
                patch.setattr(Widget, "scrollable_size", property(counted))
                asked.clear()
                app.apply_snapshot(machine(2, per_gpu=per_gpu, cpu_101=55.0))  # type: ignore[arg-type]
                await pilot.pause()
                counts.append(len(asked))
            panel = app.query_one(ProcessPanel)
            assert len(panel.pids()) == 4 * per_gpu
    assert counts[0] == counts[1] > 0


async def test_the_cards_room_is_planned_again_only_when_what_a_card_shows_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    planned: list[int] = []
    plan_cards = layout.plan_cards

    def counted(*args: object, **kwargs: object) -> layout.CardLayout:
        planned.append(1)
        return plan_cards(*args, **kwargs)  # type: ignore[arg-type]

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await shown(app, pilot, 3)
        monkeypatch.setattr(layout, "plan_cards", counted)
        app.apply_snapshot(machine(3))  # type: ignore[arg-type]
        await pilot.pause()
        assert planned == []  # the same four cards in the same room: the plan kept
        app.apply_snapshot(machine(4, temp_1=75.0))  # type: ignore[arg-type]
        await pilot.pause()
        assert planned == [1]  # GPU 1's card shows another temperature: planned from the new contents
        assert "75°C" in "".join(segment.text for segment in app.query_one("#gpu-1", GpuCard).render_line(2))


def test_a_row_idle_or_growing_below_the_threshold_keeps_its_cells_and_one_above_it_does_not() -> None:
    """The IDLE and GROWTH cells show the idle time and the growth rate only while the process is idle
    or growing: below that, a time or rate that moves changes nothing drawn, and the row keeps its cells."""
    process = proc(101, 0, 4.0)
    row = ProcessRow(process=process, gpu_memory_total=None, now=NOW, idle_seconds=30.0, growth_rate=1.0)
    later = ProcessRow(process=process, gpu_memory_total=None, now=NOW + 1, idle_seconds=31.0, growth_rate=2.0)
    assert same_but_time(row, later)
    idle = ProcessRow(process=process, gpu_memory_total=None, now=NOW, idle_seconds=300.0, idle=True)
    idle_later = ProcessRow(process=process, gpu_memory_total=None, now=NOW + 1, idle_seconds=360.0, idle=True)
    assert not same_but_time(idle, idle_later)
    assert [COLUMN_BY_NAME["idle"].cell(r) for r in (row, later)] == ["", ""]
    assert COLUMN_BY_NAME["idle"].cell(idle) != COLUMN_BY_NAME["idle"].cell(idle_later)
    growing = ProcessRow(process=process, gpu_memory_total=None, now=NOW, growth_rate=1e6, growing=True)
    growing_faster = ProcessRow(process=process, gpu_memory_total=None, now=NOW + 1, growth_rate=2e6, growing=True)
    assert not same_but_time(growing, growing_faster)
    assert [COLUMN_BY_NAME["growth"].cell(r) for r in (row, later)] == ["", ""]


async def test_a_new_clock_in_a_cards_subtitle_repaints_its_bottom_border_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual repaints a whole widget for a new border title, every line through its styles; the card
    has it repaint the border line that shows it, and the screen shows the new clock."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await shown(app, pilot, FILL_TICKS)
        card = app.query_one("#gpu-1", GpuCard)
        refreshes = Refreshes(monkeypatch, GpuCard)
        asked: list[int] = []
        render_line = GpuCard.render_line

        def counted(widget: GpuCard, y: int) -> object:
            asked.append(y)
            return render_line(widget, y)

        monkeypatch.setattr(GpuCard, "render_line", counted)
        faster = machine(FILL_TICKS)
        gpus = list(faster.gpus)  # type: ignore[attr-defined]
        gpus[1] = replace(gpus[1], clock_sm=1980)
        app.apply_snapshot(replace(faster, gpus=tuple(gpus)))  # type: ignore[arg-type]
        bottom = card.outer_size.height - 1
        offset = card.content_offset
        assert refreshes.calls == [(card, (Region(-offset.x, bottom - offset.y, card.outer_size.width, 1),))]
        await pilot.pause()
        assert asked == []  # no line of the card's content drawn again
        assert str(card.border_subtitle).strip() == "P0 · 1980MHz"
        assert "1980MHz" in app.export_screenshot()


async def test_a_process_that_did_not_change_keeps_its_row_and_its_time_moves_on() -> None:
    """A thousand rows at 8x128 are not made again a tick: a process whose sample is the object it was
    keeps its row, on the new tick's clock; one whose sample changed gets a new row with its figures."""
    steady, busy = proc(101, 0, 4.0, age_s=3590), proc(102, 0, 4.0, cpu=10.0)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [steady, busy]), timestamp=NOW))
        await pilot.pause()
        panel = app.query_one(ProcessPanel)
        before = {row.process.pid: row for row in panel.rows}
        app.apply_snapshot(snapshot(gpu(0, [steady, replace(busy, cpu_percent=64.0)]), timestamp=NOW + 20))
        await pilot.pause()
        after = {row.process.pid: row for row in panel.rows}
        assert after[101] is before[101] and after[101].now == NOW + 20
        assert after[102] is not before[102] and after[102].process.cpu_percent == 64.0
        lines = {pid: "".join(s.text for s in panel.render_line(1 + panel.pids().index(pid))) for pid in (101, 102)}
        assert " 1h00m " in lines[101]  # 3590 s old 20 s later: its TIME moved on
        assert " 64.0 " in lines[102]
