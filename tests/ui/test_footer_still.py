"""The footer gives the line it drew while nothing refreshed it (issue 36, item 5: an idle monitor stays idle).

Docked at the bottom, the footer is clipped to the screen rather than to its row, so Textual's compositor
drew it on every frame that changed any line of the screen (a figure in the process panel), to the same
cells. Now it gives the line it drew; a new theme, size or colour filter draws it anew, as Textual draws it.
"""

from __future__ import annotations

from collections import Counter

import pytest
from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.key_footer import KeyFooter

from .factory import make_app
from .test_panel_finished_lines import machine
from .test_repaint_static import settled


def footer_line(app: GpuTopApp) -> tuple[list[Segment], list[Segment]]:
    """The footer's line as it gives it, and as Textual draws it afresh."""
    footer = app.screen.query_one(KeyFooter)
    whole = Region(0, 0, *footer.outer_size)
    given = list(footer.render_lines(whole)[0])
    footer.refresh()
    return given, list(Widget.render_lines(footer, whole)[0])


async def test_the_footer_is_not_drawn_again_when_the_panel_changes_and_is_on_a_new_theme(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: Counter[str] = Counter()
    textual = Widget.render_lines

    def counting(self: Widget, crop: Region) -> list[Strip]:
        drawn[type(self).__name__] += 1
        return textual(self, crop)

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(machine(0, 30))
        await settled(pilot, app)
        monkeypatch.setattr(Widget, "render_lines", counting)
        app.apply_snapshot(machine(1, 30))  # every process's CPU moved: the panel's lines change
        await pilot.pause()
        assert drawn["KeyFooter"] == 0
        dark = footer_line(app)
        assert dark[0] == dark[1]
        for change in ("theme", "size", "ansi"):
            drawn.clear()
            if change == "theme":
                app.theme = "textual-light"
            elif change == "size":
                await pilot.resize_terminal(100, 40)
            else:
                app.ansi_color = True
            await pilot.pause()
            assert drawn["KeyFooter"] >= 1, change  # drawn anew
            given, textuals = footer_line(app)
            assert given == textuals, change
        assert given != dark[0]
