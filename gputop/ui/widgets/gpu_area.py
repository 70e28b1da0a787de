"""The main screen's GPU cards in the room the layout gives them: they scroll beyond it, and a line at its
foot names the GPUs out of view (``+1 GPU ↓``), never only a one-cell scrollbar."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.out_of_view import out_of_view_text
from gputop.ui.widgets.still_frame import StillFrame


def out_of_view_words(above: list[int], below: list[int]) -> str:
    """``+1 GPU ↓ (3)``, ``+2 GPUs ↓ (6, 7)   1 ↑ (0)``: the GPUs below and above the view, by index."""
    return out_of_view_text(
        [str(index) for index in above], [str(index) for index in below],
        below_words="+{count} GPU{s} ↓ ({names})", above_words="{count} ↑ ({names})",
    )


class GpuArea(VerticalScroll, StillFrame, can_focus=False):
    """The cards' scrolling area; its last line names the GPUs out of view while some are."""

    DEFAULT_CSS = """
    GpuArea > #gpu-more { dock: bottom; height: 1; display: none; text-align: right; color: $text-warning; }
    """

    def __init__(self, grid: GpuGrid, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.grid = grid
        self.more = Static(id="gpu-more")

    def compose(self) -> ComposeResult:
        yield self.grid
        yield self.more

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self.tell, init=False)
        self.watch(self, "virtual_size", self.tell, init=False)

    def on_resize(self) -> None:
        self.call_after_refresh(self.tell)

    def out_of_view(self, lines: int) -> tuple[list[int], list[int]]:
        """(above, below): the GPUs whose card's first line (its name) is out of the area's first
        ``lines`` lines: scrolled above, or below."""
        first = round(self.scroll_y)
        last = first + lines
        above: list[int] = []
        below: list[int] = []
        for card in self.grid.query(GpuCard):
            top = card.virtual_region.y
            if top >= last:
                below.append(card.index)
            elif top < first:
                above.append(card.index)
        return above, below

    def tell(self) -> None:
        """Name the GPUs out of view (hidden while every card shows); again after it shows or hides."""
        height = self.scrollable_content_region.height
        words = out_of_view_words(*self.out_of_view(height))
        if words:  # the line itself covers the view's last line
            words = out_of_view_words(*self.out_of_view(height - 1))
        line = Text(words)
        line.truncate(max(1, self.size.width - 1), overflow="ellipsis")
        if line.plain == str(self.more.content) and self.more.display == bool(words):
            return
        self.more.display = bool(words)
        self.more.update(line)
        self.call_after_refresh(self.tell)
