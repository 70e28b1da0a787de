"""A tick that moves only a card's sparklines draws them alone (issue 36, item 5).

While a card shows the same content (a still GPU: figures, width and form unchanged), only its sparklines
can move: the history grows a value a tick until it is as long as they are wide. Such a tick draws the
sparklines into the lines as built (``SparkLine.moved_on``) rather than building every figure, bar and
label again; what the card then shows is exactly what a card built afresh shows, full or compact, on a
GPU that answers and on one that is silent (dimmed)."""

from __future__ import annotations

from dataclasses import replace
from unittest import mock

import pytest
from textual.geometry import Region
from textual.widget import Widget

from gputop.core.analysis.history import History
from gputop.ui.widgets import gpu_card as gpu_card_module
from gputop.ui.widgets.card_lines import CardContent, compact_lines, full_lines, spark_room
from gputop.ui.widgets.card_sparks import Spark, SparkLine, SparkStrips
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.styled_line import StripStyles, StyledLine

from .factory import NOW, StaticSource, gpu, make_app, proc, snapshot

P1 = proc(101, 0, 1.0)


def afresh(content: CardContent, width: int, compact: bool) -> list[StyledLine]:
    lines = compact_lines(content, width, False) if compact else full_lines(content, width)
    if not content.gpu.answering:
        for line in lines:
            line.stylize("dim")
    return [line.fit(width) for line in lines]


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("silent", [False, True])
def test_a_still_gpu_s_card_moves_its_sparklines_on_without_building_its_lines(compact: bool, silent: bool) -> None:
    sample = replace(gpu(0, (P1,)), fan_speed=40.0)
    if silent:
        sample = replace(sample, answering=False, not_answering_since=NOW - 14)
    width = 90
    history = History(gpu_maxlen=100)
    card = GpuCard(0)
    card.compact = compact
    moved = 0
    with (
        mock.patch.object(gpu_card_module, "full_lines", wraps=full_lines) as full,
        mock.patch.object(gpu_card_module, "compact_lines", wraps=compact_lines) as short,
    ):
        for tick in range(spark_room(width, compact, not silent) + 3):
            # The figures vary in the history (so the sparklines show shapes); the card's sample stays.
            figures = replace(sample, utilization_gpu=(tick * 37) % 100, memory_used=(tick % 7 + 1) * 2**30)
            history.add(snapshot(replace(figures, answering=True), timestamp=NOW + tick))
            content = CardContent(sample, history=history.gpus[0], now=NOW)
            before = card._built
            card.content = content
            lines = card._make_lines(width)
            assert lines == afresh(content, width, compact), tick
            moved += tick > 0 and lines != before
        # Built once, on the first tick; every tick after drew only the sparklines, which moved.
        assert full.call_count + short.call_count == 1
    assert moved > 5
    assert any(isinstance(line, SparkLine) for line in card._drawn)


@pytest.mark.parametrize("compact", [False, True])
def test_a_tick_whose_sparklines_draw_the_same_cells_keeps_every_line(compact: bool) -> None:
    # A full history of 50 %: a new value of 50.4 % differs from the one it pushes out of the sparkline,
    # yet draws the same block. The card compares its sparklines as drawn, not their values: it keeps the
    # very lines it had (nothing to repaint), which are what a card built afresh shows.
    sample = replace(gpu(0, (P1,)), utilization_gpu=50.0)
    width = 90
    history = History(gpu_maxlen=200)
    for tick in range(spark_room(width, compact) + 5):
        history.add(snapshot(sample, timestamp=NOW + tick))
    card = GpuCard(0)
    card.compact = compact
    card.content = CardContent(sample, history=history.gpus[0], now=NOW)
    before = card._make_lines(width)
    history.add(snapshot(replace(sample, utilization_gpu=50.4), timestamp=NOW + 500))
    card.content = content = CardContent(sample, history=history.gpus[0], now=NOW)
    assert card._make_lines(width) is before
    assert before == afresh(content, width, compact)


async def test_a_tick_that_moves_only_the_sparklines_builds_no_card_and_repaints_their_lines() -> None:
    source = StaticSource((gpu(0, (P1,)),))
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        (card,) = app.query(GpuCard)
        with (
            mock.patch.object(gpu_card_module, "full_lines", wraps=full_lines) as full,
            mock.patch.object(gpu_card_module, "compact_lines", wraps=compact_lines) as short,
        ):
            for _ in range(3):
                before = list(card._lines)
                app.apply_snapshot(app.sampler.sample())  # the same figures: the history grows a value
                await pilot.pause()
                assert full.call_count + short.call_count == 0
                assert card._lines != before  # the sparklines moved on
                assert card._lines == afresh(card.content, card.content_size.width, card.compact)  # type: ignore[arg-type]


@pytest.mark.parametrize("silent", [False, True])
async def test_a_moved_sparkline_line_is_set_in_its_frame_from_its_head_and_tail_finished_once(silent: bool) -> None:
    # A tick that moves only the sparklines styles and filters their cells alone: the line drawn for a moved
    # sparkline keeps the segments its head and tail were finished into on the tick before (the very objects:
    # only the head's last and the tail's first segment, which the cells may join, and the cells are new), and
    # the card draws what Textual draws of it afresh, segment for segment, on a GPU that answers and on a
    # silent one (dimmed).
    sample = gpu(0, (P1,))
    if silent:
        sample = replace(sample, answering=False, not_answering_since=NOW - 14)
    app = make_app(StaticSource((sample,)))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(2):  # the second tick's lines are the card's own, not Textual's drawing it took at first
            app.apply_snapshot(app.sampler.sample())
            await pilot.pause()
        (card,) = app.query(GpuCard)
        whole = Region(0, 0, *card.outer_size)
        moved = 0
        for _ in range(3):
            before = card.render_lines(whole)
            app.apply_snapshot(app.sampler.sample())  # the same figures: the history grows a value
            await pilot.pause()
            after = card.render_lines(whole)
            for y, (old, new) in enumerate(zip(before, after, strict=True)):
                if new is old:
                    continue
                assert isinstance(card._drawn[y - card.content_offset.y], SparkLine), y
                kept = {id(segment) for segment in old}
                made = [segment for segment in new if id(segment) not in kept]
                assert len(made) <= 3 < len(list(new)) - len(made), (y, made)
                moved += 1
        assert moved >= 3
        card.refresh()  # Textual's styles cache forgets the card: what follows is drawn from the styles
        assert [list(strip) for strip in after] == [list(strip) for strip in Widget.render_lines(card, whole)]


@pytest.mark.parametrize("joined", [False, True])
async def test_a_sparkline_set_in_the_frame_joins_its_neighbours_of_its_style_as_the_whole_line_styled_does(
    joined: bool,
) -> None:
    # Where the head's last piece and the tail's first are in the sparkline's style, the three are one
    # segment, as when the whole line is styled; the line set in the frame is what the frame makes of it.
    app = make_app(StaticSource((gpu(0, (P1,)),)))
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        (card,) = app.query(GpuCard)
        frame = card.current_frame()
        assert frame is not None
        around = "green" if joined else "bold"
        cells = "▁▂▃▄▅▆▇█▁▂"
        head = StyledLine(("GPU ", "bold"), ("x", around))
        tail = StyledLine(("y", around), (" end", "bold"))
        tail.append(" " * (frame.content_width - head.cell_length - len(cells) - tail.cell_length))
        line = SparkLine(head, Spark("utilization", len(cells), 0.0, 100.0, "green"), tail, cells)
        base = card.line_style
        finished = SparkStrips().finished(0, line, base, frame)
        assert finished is not None
        whole = StripStyles().strip(StyledLine(*line.pieces, style=line.style), base, frame.content_width)
        row = Region(0, frame.top, frame.size.width, 1)
        frame.forget([Region(0, 0, frame.content_width, 1)])
        (expected,) = frame.lines(row, card.frame_titles(), lambda y: whole)
        assert list(finished) == list(expected)
        assert any(segment.text == "x" + cells + "y" for segment in finished) == joined
