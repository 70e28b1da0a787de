"""A widget that gives the compositor the lines it drew while nothing refreshed it.

Textual's compositor draws every widget that the box of a frame's changed lines overlaps, each through its
styles again. On a still main screen that box runs from the host strip to the process panel, so the GPU
area, its grid and every card were drawn each tick to the very same cells. A widget is refreshed for every
change of what it shows (its lines, titles, classes, styles; Textual refreshes it for a new size too):
until then, asked for the same part of itself at the same size through the same line filters (the
theme's colours, ANSI or not), it draws what it drew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from typing_extensions import Self


class StillFrame(Widget):
    """Keeps the lines of its last drawing (``draw_lines``) until it is refreshed."""

    _still: tuple[tuple[object, ...], list[Strip]] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        drawn_for = (crop, self.outer_size, *self.get_line_filters())
        still = self._still
        if still is not None and still[0] == drawn_for:
            return list(still[1])
        strips = self.draw_lines(crop)
        self._still = (drawn_for, strips)
        return list(strips)

    def draw_lines(self, crop: Region) -> list[Strip]:
        """The lines of ``crop`` drawn afresh (Textual's drawing, by default)."""
        return super().render_lines(crop)

    def refresh_over(self, *regions: Region) -> None:
        """Regions repainted for what lies over this widget (its children's lines that changed, each of
        which forgot its own drawing): this widget's own lines there did not change, and are kept."""
        still = self._still
        self.refresh(*regions)
        self._still = still

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        self._still = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
