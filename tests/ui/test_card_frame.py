"""A still card, and the GPU area and grid around it, are not drawn again (issue 36, item 5: an idle
monitor stays idle).

Textual draws every widget that the box of a frame's changed lines overlaps: on a still screen, the GPU
area, its grid and its cards, between a changed host strip and a changed process panel, were drawn again
each tick, line by line through Textual's styles, to the very same cells. A widget that nothing refreshed
since it was drawn, asked for the same part of itself at the same size through the same colour filters,
now gives the lines it drew. Whatever changes what it shows (a figure, the chosen card's border, the
theme, the terminal's size, ANSI colours, the cards scrolled) draws it anew, and the screen is then
exactly the screen drawn with each of them drawn anew.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from gputop.ui.app import GpuTopApp
from gputop.ui.main_screen import MainColumn, MainScreen
from gputop.ui.widgets.gpu_area import GpuArea
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.still_frame import StillFrame
from gputop.ui.widgets.title_bar import TitleBar

from .factory import StaticSource, gpu, make_app, proc, screen_text

P1, P2 = proc(101, 0, 1.0), proc(102, 1, 2.0)


def styled_screen(app: GpuTopApp) -> list[list[tuple[str, Style | None]]]:
    """Every cell run of the screen as it is drawn now: its text and its style."""
    return [[(segment.text, segment.style) for segment in strip] for strip in app.screen._compositor.render_strips()]


def drawn_anew(app: GpuTopApp) -> list[list[tuple[str, Style | None]]]:
    """The screen with the title, the main column, GPU area, grid and cards refreshed first, so drawn from their styles
    again."""
    stills = [*app.query(TitleBar), *app.query(MainColumn), *app.query(GpuArea), *app.query(GpuGrid)]
    stills += [screen for screen in app.screen_stack if isinstance(screen, MainScreen)]
    for widget in [*stills, *app.query(GpuCard)]:
        widget.refresh()
    return styled_screen(app)


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Counter[object]:
    """How many times each card (by GPU index), the grid, the area, the title, the main column and the main
    screen's own lines were drawn afresh rather than given as last drawn (a card draws its lines in its frame,
    the rest through Textual's styles)."""
    counts: Counter[object] = Counter()
    still, card = StillFrame.draw_lines, GpuCard.draw_lines

    def counting_still(self: StillFrame, crop: Region) -> list[Strip]:
        if isinstance(self, (GpuGrid, GpuArea)):
            counts[type(self).__name__] += 1
        return still(self, crop)

    def counting_card(self: GpuCard, crop: Region) -> list[Strip]:
        counts[self.index] += 1
        return card(self, crop)

    def counting_textual(self: Widget, crop: Region) -> list[Strip]:
        if isinstance(self, (TitleBar, MainScreen)) or self.id == "main":  # the title, the screen, the main column
            counts[type(self).__name__] += 1
        return textual(self, crop)

    textual = Widget.render_lines
    monkeypatch.setattr(StillFrame, "draw_lines", counting_still)
    monkeypatch.setattr(GpuCard, "draw_lines", counting_card)
    monkeypatch.setattr(Widget, "render_lines", counting_textual)
    return counts


async def test_a_card_nothing_changed_on_is_not_drawn_again_and_a_changed_one_is(drawn: Counter[object]) -> None:
    source = StaticSource((gpu(0, (P1,)), gpu(1, (P2,))))
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # A history full of these figures: a tick of them moves no sparkline.
        for _ in range(130):
            app.apply_snapshot(app.sampler.sample(), quiet=True)
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        still = styled_screen(app)

        drawn.clear()
        app.screen.refresh_over(app.screen.region)  # the whole screen drawn again, and nothing on it changed
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        assert styled_screen(app) == still
        assert drawn == Counter()
        assert drawn_anew(app) == still
        assert drawn == Counter(
            {0: 1, 1: 1, "GpuGrid": 1, "GpuArea": 1, "TitleBar": 1, "MainColumn": 1, "MainScreen": 1}
        )

        # A figure: its card alone is drawn again, and shows it.
        drawn.clear()
        source.gpus = (source.gpus[0], replace(source.gpus[1], utilization_gpu=97.0))
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        assert drawn[0] == 0 and drawn[1] > 0
        shown = styled_screen(app)
        assert shown != still and " 97%" in screen_text(app)
        assert drawn_anew(app) == shown

        # A new title (f: frozen) shows on the next frame, on a title bar that gave its line as drawn till then.
        await pilot.press("f")
        await pilot.pause()
        assert "FROZEN" in screen_text(app).splitlines()[0]
        frozen = styled_screen(app)
        assert drawn_anew(app) == frozen
        await pilot.press("f")
        await pilot.pause()
        assert "FROZEN" not in screen_text(app).splitlines()[0]
        thawed = styled_screen(app)
        assert thawed != frozen and drawn_anew(app) == thawed
        # The chosen card's border (Tab: the cards take the focus), then the theme, then the size.
        await pilot.press("tab")
        await pilot.pause()
        chosen = styled_screen(app)
        assert "╔" in screen_text(app) and chosen != shown
        assert drawn_anew(app) == chosen
        drawn.clear()
        app.theme = "textual-light"
        await pilot.pause()
        assert drawn["MainScreen"] == 1  # its own lines, covered here, drawn in the new theme's colours
        light = styled_screen(app)
        assert light != chosen and drawn_anew(app) == light
        await pilot.resize_terminal(100, 40)
        await pilot.pause()
        narrow = styled_screen(app)
        assert narrow != light and drawn_anew(app) == narrow
        # The terminal's own 16 colours instead of the theme's: no style changes, Textual's colour filter does.
        app.ansi_color = True
        await pilot.pause()
        ansi = styled_screen(app)
        assert ansi != narrow and drawn_anew(app) == ansi
        # A screen opened over it (help), the theme and the size changed under that, the screen closed.
        app.ansi_color = False
        await pilot.press("h")
        await pilot.pause()
        assert app.screen is not app.main
        app.theme = "textual-dark"
        await pilot.resize_terminal(110, 40)
        await pilot.pause()
        drawn.clear()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main
        assert drawn["MainScreen"] > 0  # drawn anew for the theme and size it came back to
        back = styled_screen(app)
        assert back != ansi and drawn_anew(app) == back


async def test_cards_scrolled_in_their_area_show_what_drawing_them_anew_shows(drawn: Counter[object]) -> None:
    # Sixteen GPUs on 24 lines: the cards scroll in their area, and the arrows (the grid focused) scroll them.
    app = make_app(StaticSource(tuple(gpu(index, (proc(100 + index, index, 1.0),)) for index in range(16))))
    async with app.run_test(size=(100, 24)) as pilot:
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        area = app.query_one(GpuArea)
        top = styled_screen(app)
        drawn.clear()
        app.screen.refresh_over(app.screen.region)  # the whole screen drawn again, nothing on it changed
        await pilot.pause()
        assert styled_screen(app) == top
        assert drawn == Counter()
        await pilot.press("tab")
        for _ in range(15):
            await pilot.press("down")
        await pilot.pause()
        assert area.scroll_y > 0
        scrolled = styled_screen(app)
        assert scrolled != top and drawn_anew(app) == scrolled
        await pilot.press("home")
        await pilot.pause()
        assert area.scroll_y == 0
        back = styled_screen(app)
        assert back != scrolled and drawn_anew(app) == back
