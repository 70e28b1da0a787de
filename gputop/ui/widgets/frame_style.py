"""A line-API widget's styles, worked out once until they can have changed, and its width once a frame.

``rich_style`` walks every ancestor's styles (about 70 us on a small machine) and Textual forgets it,
with the component styles (``get_component_rich_style``), at every ``refresh()``, even one of a few
lines. gputop refreshes the lines that changed every tick, so each card and the process panel worked
the same styles out again every frame. Styles change only through Textual's styles: a rule set in code
refreshes the whole widget (and its children, for colours and opacity), and the stylesheet applied
again (a theme, focus, hover, a class) calls ``notify_style_update``. Those forget the styles kept here.

The width a line is drawn at (``line_width``: inside a border, inside a scrollbar) is the same for every
line of a frame: the compositor asks for a frame's lines in one ``render_lines`` call, so it is asked
of Textual once there. A line drawn outside a frame (a test reading one) asks afresh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from typing_extensions import Self


class FrameStyled(Widget):
    """Gives ``line_style`` (the widget's ``rich_style``) and ``component_style``, kept until a whole
    refresh or a new stylesheet; a refresh of some lines keeps them."""

    _styles_kept: dict[str | None, Style] | None = None
    _frame_width: int | None = None

    def line_width(self) -> int:
        """The width this widget's lines are drawn at (its content's, by default)."""
        return self.content_size.width

    @property
    def frame_width(self) -> int:
        """``line_width()``, asked once for the lines of a frame."""
        width = self._frame_width
        return self.line_width() if width is None else width

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_width = self.line_width()
        try:
            return super().render_lines(crop)
        finally:
            self._frame_width = None

    def _kept(self) -> dict[str | None, Style]:
        kept = self._styles_kept
        if kept is None:
            kept = self._styles_kept = {}
        return kept

    @property
    def line_style(self) -> Style:
        """The style under every line of this widget."""
        kept = self._kept()
        style = kept.get(None)
        if style is None:
            style = kept[None] = self.rich_style
        return style

    def component_style(self, name: str) -> Style:
        """``get_component_rich_style(name)``, kept as ``line_style`` is."""
        kept = self._kept()
        style = kept.get(name)
        if style is None:
            style = kept[name] = self.get_component_rich_style(name)
        return style

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if not regions:  # a style set in code refreshes the whole widget
            self._styles_kept = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def notify_style_update(self) -> None:
        self._styles_kept = None
        super().notify_style_update()
