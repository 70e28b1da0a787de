"""Repaint only what changed: a tick whose figures did not change draws no card line, a tick that
changes one GPU's temperature draws that card's temperature line alone, and a card drawn again whole
reuses the Strips of the lines that did not change (issue 27)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rich.text import Text
from textual.strip import Strip

from gputop.ui.widgets import gpu_card
from gputop.ui.widgets.card_lines import CardContent, card_titles
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import NOW, make_app, snapshot, two_gpu_snapshot

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
    """(GPU index, line) of every card line drawn from now on."""
    drawn: Counter[tuple[int, int]] = Counter()
    render_line = GpuCard.render_line

    def counted(card: GpuCard, y: int) -> Strip:
        drawn[(card.index, y)] += 1
        return render_line(card, y)

    monkeypatch.setattr(GpuCard, "render_line", counted)
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

    def titles(content: CardContent, filtered: bool) -> tuple[Text, Text | None]:
        made.append(content.gpu.index)
        return card_titles(content, filtered)

    monkeypatch.setattr(gpu_card, "card_titles", titles)
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
        gpus = list(at(2).gpus)  # type: ignore[attr-defined]
        gpus[1] = replace(gpus[1], clock_sm=1980)
        app.apply_snapshot(snapshot(*gpus, timestamp=NOW + 2))
        await pilot.pause()
        assert str(card.border_subtitle).strip() == "P0 · 1980MHz"
        assert made == [1]
