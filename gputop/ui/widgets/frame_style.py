"""A line-API widget's own style, worked out once a frame instead of once a line."""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class FrameStyled(Widget):
    """Gives ``line_style``: the widget's ``rich_style`` for the lines of the frame being drawn.

    ``rich_style`` walks every ancestor's styles (about 70 us on a small machine); a card draws
    three lines a tick and the process panel fifteen, each asking for it once or twice. The
    compositor asks a widget for the lines of one frame in one ``render_lines`` call, during
    which its styles cannot change, so the style is looked up once there. A line drawn outside
    a frame (a test reading one) looks it up afresh.
    """

    _frame_style: Style | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._frame_style = None

    @property
    def line_style(self) -> Style:
        """The style under every line of this widget."""
        style = self._frame_style
        return self.rich_style if style is None else style
