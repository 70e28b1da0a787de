"""Plain terminals: no colour under ``NO_COLOR``, ASCII only where the glyphs cannot be shown.

``NO_COLOR`` (any value but the empty string, https://no-color.org) takes every colour off what is
drawn; bold, reverse, underline and italic stay, and the stylesheet's ``App:nocolor`` rules use them
for what colour alone would say (the cursor's row). Textual itself would draw in greys for any
``NO_COLOR``, even an empty one. Under the ASCII set (``core.glyphs``) everything written to the
terminal passes through ``to_ascii`` on its way out: borders, bars, marks, Textual's own widgets.
Both use public Textual names only: ``App.get_line_filters`` and ``App.get_driver_class``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from textual.app import App, ReturnType
from textual.color import Color
from textual.driver import Driver
from textual.filter import LineFilter, Monochrome, NoColor

from gputop.core.glyphs import ascii_only, to_ascii, wants_no_colour


@lru_cache(maxsize=4096)
def _colourless(style: Style) -> Style:
    return style.without_color


class NoColour(LineFilter):
    """Every segment's colours taken off, its other attributes kept."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            Segment(text, None if style is None else _colourless(style), control)
            for text, style, control in segments
        ]


def ascii_driver(driver: type[Driver]) -> type[Driver]:
    """``driver`` writing every character beyond ASCII as its stand-in (``core.glyphs.to_ascii``)."""

    def write(self: Driver, data: str) -> None:
        driver.write(self, to_ascii(data))

    return type(f"Ascii{driver.__name__}", (driver,), {"write": write})


class PlainTerminalApp(App[ReturnType]):
    """An App that honours ``NO_COLOR`` and the ASCII set chosen at start."""

    def __init__(self) -> None:
        super().__init__()
        self.no_colour = wants_no_colour(os.environ)
        self.no_color = self.no_colour  # the stylesheet's :nocolor
        self._no_colour_filter = NoColour()
        # Textual's filters now (those enabled, in order) and what gputop makes of them: asked by every widget
        # drawn, a few dozen times a frame, and the same every time but after a change of theme or colours.
        self._line_filters_from: tuple[tuple[LineFilter, ...], bool] | None = None
        self._line_filters: tuple[LineFilter, ...] = ()

    def get_line_filters(self) -> Sequence[LineFilter]:
        textuals = (tuple(super().get_line_filters()), self.no_colour)
        if textuals != self._line_filters_from:
            filters = [
                line_filter for line_filter in textuals[0]
                if not isinstance(line_filter, (Monochrome, NoColor))  # Textual's, for any NO_COLOR at all
            ]
            if self.no_colour:
                filters.append(self._no_colour_filter)
            self._line_filters_from, self._line_filters = textuals, tuple(filters)
        return self._line_filters

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        return ascii_driver(driver) if ascii_only() else driver
