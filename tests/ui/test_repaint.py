"""Repaint only what changed: a tick whose figures did not change draws no card line, a tick that
changes one GPU's temperature draws that card's temperature line alone, and a card drawn again whole
reuses the Strips of the lines that did not change (issue 27)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rich.text import Text
from textual.strip import Strip

from gputop.core.model import ProcessSample
from gputop.ui.widgets import gpu_card
from gputop.ui.widgets.card_frame import CardFrame
from gputop.ui.widgets.card_lines import TitlePieces, titles_text
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import NOW, gpu, make_app, proc, snapshot, two_gpu_snapshot

SIZE = (120, 40)
# More ticks than a sparkline is wide at 120 columns (about 20 cells): after them every sparkline
# of a machine whose figures do not change is full and stays as it is.
FILL_TICKS = 30


def at(seconds: float, **changes: float) -> object:
    """``two_gpu_snapshot`` taken ``seconds`` after NOW, GPU 1 at ``changes['temp1']`` °C if given."""
    base = two_gpu_snapshot()
    gpus = list(base.gpus)
    if "temp1" in changes:
        gpus[1] = replace(gpus[1], temperature=changes["temp1"])
    return replace(snapshot(*gpus, timestamp=NOW + seconds), host=base.host)


def counting(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[int, int]]:
    """(GPU index, line) of every card line drawn from now on: as a line of content (``render_line``), or
    set in the card's frame by the card itself (``finished_line``: a line with a sparkline)."""
    drawn: Counter[tuple[int, int]] = Counter()
    render_line, finished_line = GpuCard.render_line, GpuCard.finished_line

    def counted(card: GpuCard, y: int) -> Strip:
        drawn[(card.index, y)] += 1
        return render_line(card, y)

    def counted_finished(card: GpuCard, y: int, frame: CardFrame) -> Strip | None:
        strip = finished_line(card, y, frame)
        if strip is not None:
            drawn[(card.index, y)] += 1
        return strip

    monkeypatch.setattr(GpuCard, "render_line", counted)
    monkeypatch.setattr(GpuCard, "finished_line", counted_finished)
    return drawn


async def test_a_tick_whose_figures_did_not_change_draws_no_card_line(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for tick in range(FILL_TICKS):
            app.apply_snapshot(at(tick))  # type: ignore[arg-type]
        await pilot.pause()
        drawn = counting(monkeypatch)
        app.apply_snapshot(at(FILL_TICKS))  # type: ignore[arg-type]
        await pilot.pause()
        assert drawn == Counter()


async def test_one_gpu_warmer_draws_that_cards_temperature_line_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for tick in range(FILL_TICKS):
            app.apply_snapshot(at(tick))  # type: ignore[arg-type]
        await pilot.pause()
        card = app.query_one("#gpu-1", GpuCard)
        lines = ["".join(segment.text for segment in card.render_line(y)) for y in range(3)]
        assert [line[:4] for line in lines] == ["MEM ", "UTIL", "TEMP"]
        drawn = counting(monkeypatch)
        app.apply_snapshot(at(FILL_TICKS, temp1=75.0))  # type: ignore[arg-type]
        await pilot.pause()
        assert drawn == Counter({(1, 2): 1})
        assert "75°C" in "".join(segment.text for segment in card.render_line(2))


async def test_a_card_drawn_again_whole_reuses_the_strips_of_unchanged_lines() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for tick in range(FILL_TICKS):
            app.apply_snapshot(at(tick))  # type: ignore[arg-type]
        await pilot.pause()
        card = app.query_one("#gpu-1", GpuCard)
        before = [card.render_line(y) for y in range(3)]
        app.apply_snapshot(at(FILL_TICKS, temp1=75.0))  # type: ignore[arg-type]
        await pilot.pause()
        after = [card.render_line(y) for y in range(3)]
        assert after[0] is before[0] and after[1] is before[1]  # MEM and UTIL: the same Strips
        assert after[2] is not before[2] and after[2].text != before[2].text  # TEMP: drawn anew


async def test_the_border_title_is_made_again_only_when_what_it_says_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []

    def titles(pieces: TitlePieces) -> tuple[Text, Text | None]:
        made.append(int(pieces[0][0][0]))  # the GPU's index, the title's first piece
        return titles_text(pieces)

    monkeypatch.setattr(gpu_card, "titles_text", titles)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(at(0))  # type: ignore[arg-type]
        await pilot.pause()
        card = app.query_one("#gpu-1", GpuCard)
        assert str(card.border_subtitle).strip() == "P0 · 1500MHz"
        assert sorted(set(made)) == [0, 1]
        made.clear()
        app.apply_snapshot(at(1))  # type: ignore[arg-type]
        await pilot.pause()
        assert made == []
        # A figure the title does not show: the card's lines change, its title is not made again.
        gpus = list(at(2).gpus)  # type: ignore[attr-defined]
        gpus[1] = replace(gpus[1], utilization_gpu=88.0)
        app.apply_snapshot(snapshot(*gpus, timestamp=NOW + 2))
        await pilot.pause()
        assert "88%" in "".join(segment.text for segment in card.render_line(1)) and made == []
        gpus[1] = replace(gpus[1], clock_sm=1980)
        app.apply_snapshot(snapshot(*gpus, timestamp=NOW + 3))
        await pilot.pause()
        assert str(card.border_subtitle).strip() == "P0 · 1980MHz"
        assert made == [1]


def row_text(app: object, pid: int) -> str:
    table = app.processes  # type: ignore[attr-defined]
    return "".join(segment.text for segment in table.render_line(1 + table.pids().index(pid)))


def one_process(process: ProcessSample, seconds: float) -> object:
    return snapshot(gpu(0, [process]), timestamp=NOW + seconds)


async def test_a_process_row_keeps_its_cells_but_its_time_moves_on() -> None:
    sample = proc(101, 0, 40, cpu=90, age_s=3590)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(one_process(sample, 0))  # type: ignore[arg-type]
        await pilot.pause()
        first = row_text(app, 101)
        assert " 90.0 " in first
        # The same process sample 20 s later: only the TIME cell differs, and it is up to date.
        app.apply_snapshot(one_process(sample, 20))  # type: ignore[arg-type]
        await pilot.pause()
        later = row_text(app, 101)
        header = "".join(segment.text for segment in app.processes.render_line(0))
        time_cell = slice(header.index("TIME") - 2, header.index("TIME") + 4)  # right-aligned, 6 wide
        assert (first[time_cell], later[time_cell]) == ("59m50s", " 1h00m")
        assert later[: time_cell.start] + later[time_cell.stop :] == first[: time_cell.start] + first[time_cell.stop :]


async def test_a_process_whose_figures_changed_gets_every_cell_made_again() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(one_process(proc(101, 0, 40, cpu=90), 0))  # type: ignore[arg-type]
        await pilot.pause()
        assert " 90.0 " in row_text(app, 101)
        app.apply_snapshot(one_process(proc(101, 0, 40, cpu=12.5), 1))  # type: ignore[arg-type]
        await pilot.pause()
        text = row_text(app, 101)
        assert " 12.5 " in text and " 90.0 " not in text
