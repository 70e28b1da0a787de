"""A card (and the host strip) draws its finished lines itself, and they are Textual's, segment for segment
(issue 36, item 5).

A changed line of a card went through Textual's styles cache (border, padding, background, tint,
opacity, filters) at ~70 us, against ~7 us to build the line. The card now takes what goes around its
content from Textual's own drawing of it once (``card_frame``) and sets each changed line in it. Here,
after ticks that change the figures (so the lines are the card's own, not the drawing it took), every
card of every form is compared with Textual drawing the same card afresh: full cards (round, heavy for an
alarm and a lost GPU, dashed for a silent one, round in another colour for the filtered one, double with
a reversed title for the chosen one, a title cut), compact ones (no border, a background for the
filtered, alarmed and chosen card), under NO_COLOR's monochrome filter and the terminal's ANSI colours;
and a card with a tint or an opacity, which Textual draws as before.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from gputop.core.model import MigSample, Snapshot
from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.host_strip import HostStrip

from .factory import GIB, HOST, NOW, gpu, make_app, proc, snapshot

SIZE = (120, 40)
MIGS = (
    MigSample(index=0, name="NVIDIA A100 MIG 3g.40gb", memory_total=40 * GIB, memory_used=GIB),
    MigSample(index=1, name="NVIDIA A100 MIG 1g.10gb", memory_total=10 * GIB, memory_used=0),
)
LONG_NAME = "NVIDIA H100 80GB HBM3 on a board whose name is far too long for its card"


def machine(tick: int) -> Snapshot:
    """Five GPUs whose utilisation moves each tick: a plain one, a silent one, a lost one, one whose
    memory is over 90% (an alarm, raised once it has held), one with MIG devices and a name too long."""
    util = 10.0 + (tick * 37) % 80
    taken = snapshot(
        gpu(0, [proc(101, 0, 4.0)], utilization=util),
        replace(gpu(1, utilization=util), answering=False, not_answering_since=NOW - 14),
        gpu(2, lost=True),
        gpu(3, [proc(301, 3, 75.0)], utilization=util, temperature=70.0 + tick % 5),
        gpu(4, utilization=util, migs=MIGS, name=LONG_NAME),
        timestamp=NOW + tick,
    )
    return replace(taken, host=replace(HOST, cpu_percent=util / 2))  # the host strip's CPU moves too


def segments(strips: list[Strip]) -> list[list[Segment]]:
    return [list(strip) for strip in strips]


def assert_drawn_as_textual_draws(app: GpuTopApp) -> list[str]:
    """Each card's lines (and the host strip's) as it draws them equal Textual's drawing of it afresh; the
    classes of each card."""
    forms = []
    for card in [*app.query(GpuCard), app.query_one(HostStrip)]:
        whole = Region(0, 0, *card.outer_size)
        own = segments(card.render_lines(whole))
        card.refresh()  # Textual's styles cache forgets the card: what follows is drawn from the styles
        textuals = segments(Widget.render_lines(card, whole))
        assert own == textuals, f"GPU {card.index} ({' '.join(sorted(card.classes))})"
        # Part of a card, as the compositor asks for it where another widget covers the rest.
        part = Region(3, 1, card.outer_size.width - 5, card.outer_size.height - 1)
        if part.height > 0 and part.width > 0:
            assert segments(card.render_lines(part)) == segments(Widget.render_lines(card, part))
        if isinstance(card, GpuCard):
            forms.append(" ".join(sorted(card.classes - {"gpu-card"})))
    return forms


async def moved(app: GpuTopApp, pilot: object, tick: int) -> int:
    """Two ticks whose figures differ, each drawn: the lines drawn after the first are the card's own."""
    for step in (tick, tick + 1):
        app.apply_snapshot(machine(step))
        await pilot.pause()  # type: ignore[attr-defined]
    return tick + 2


async def run_through_the_forms(app: GpuTopApp) -> list[list[str]]:
    """Every form of card, each drawn after moving figures and compared with Textual's drawing."""
    app.alert_toasts.announcer.quiet_start_s = 0.0
    seen = []
    async with app.run_test(size=SIZE) as pilot:
        tick = await moved(app, pilot, 0)
        tick = await moved(app, pilot, tick + 4)  # the memory alarm has held: raised
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("0")  # the panel filtered to GPU 0: its card marked
        tick = await moved(app, pilot, tick)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("tab")  # the cards take the focus: GPU 0's card chosen
        tick = await moved(app, pilot, tick)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("c")  # compact cards, the chosen one still chosen
        tick = await moved(app, pilot, tick)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("shift+tab")  # the panel again: compact, filtered
        tick = await moved(app, pilot, tick)
        seen.append(assert_drawn_as_textual_draws(app))
        await pilot.press("c")
        await pilot.resize_terminal(70, 40)  # one column of narrow cards: titles cut
        tick = await moved(app, pilot, tick)
        seen.append(assert_drawn_as_textual_draws(app))
        app.ansi_color = True  # the terminal's own colours: Textual's colour filter
        tick = await moved(app, pilot, tick)
        seen.append(assert_drawn_as_textual_draws(app))
    return seen


async def test_every_form_of_card_draws_what_textual_draws() -> None:
    seen = await run_through_the_forms(make_app())
    # The forms went through (so that each was compared): alarm, silent, lost, filtered, chosen, compact.
    assert seen[0] == ["", "-silent", "-alert -lost", "-alert", ""]
    assert seen[1][0] == "-filtered" and seen[2][0] == "-chosen -filtered"
    assert seen[3][0] == "-chosen -compact -filtered" and seen[3][3] == "-alert -compact"
    assert seen[4][0] == "-compact -filtered" and seen[5][0] == "-filtered"


async def test_every_form_of_card_draws_what_textual_draws_without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")  # Textual's monochrome filter on every line
    seen = await run_through_the_forms(make_app())
    assert seen[0] == ["", "-silent", "-alert -lost", "-alert", ""]


async def test_a_changed_line_is_not_drawn_through_textuals_styles_and_a_tinted_card_is() -> None:
    app = make_app()
    drawn: Counter[int] = Counter()
    original = Widget.render_lines

    def counting(self: Widget, crop: Region) -> list[Strip]:
        if isinstance(self, GpuCard):
            drawn[self.index] += 1
        elif isinstance(self, HostStrip):
            drawn[-1] += 1
        return original(self, crop)

    async with app.run_test(size=SIZE) as pilot:
        tick = await moved(app, pilot, 0)
        Widget.render_lines = counting  # type: ignore[method-assign]
        try:
            tick = await moved(app, pilot, tick)
            card = app.query_one("#gpu-0", GpuCard)
            # Their utilisation lines changed, drawn in each card's frame (GPU 1's title, "not answering
            # 16s", and GPU 3's alarm, raised now, are Textual's to draw).
            assert drawn[0] == drawn[4] == drawn[-1] == 0  # the host strip's CPU too
            drawn.clear()
            card.styles.tint = "red 40%"  # a tint: Textual draws that card, and no other
            tick = await moved(app, pilot, tick)
            assert drawn[0] > 0 and drawn[4] == 0
            assert_drawn_as_textual_draws(app)
            card.styles.tint = None
            card.styles.opacity = 0.5
            tick = await moved(app, pilot, tick)
            assert_drawn_as_textual_draws(app)
        finally:
            Widget.render_lines = original  # type: ignore[method-assign]
