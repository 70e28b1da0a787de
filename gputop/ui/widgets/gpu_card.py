"""One GPU: memory and utilisation bars, temperature against its own slowdown point, power, sparklines.

Drawn with the line API: the card is handed what it shows, built once a tick (``CardContent``), and
compares it with what it showed; only when it differs (or a sparkline's values do) are its lines and
titles built again, and then only the lines whose text changed are repainted (with every other card's
changed lines, in one refresh of the grid under them: ``GpuGrid``), each turned into a Strip once (a card
repainted whole, for a new title or class, reuses the rest); a card that nothing refreshed since it was
drawn gives the compositor the lines it drew (``StillFrame``), and a changed line is set in the border and
padding Textual drew around the card once (``card_frame``), not drawn through Textual's styles again. A
GPU whose driver calls have not come back says "not answering 14s" in its title, its figures (N/A) dimmed
and its sparklines showing the gap. The lines themselves are made in ``card_lines``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.events import Click, Resize
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip

from gputop.ui.layout import card_lines
from gputop.ui.widgets.card_frame import CardFrame, FramedLines
from gputop.ui.widgets.card_lines import (
    CardContent,
    TitlePieces,
    compact_lines,
    full_lines,
    title_pieces,
    titles_text,
)
from gputop.ui.widgets.card_sparks import SparkLine, SparkStrips
from gputop.ui.widgets.sparkline import Sparklines
from gputop.ui.widgets.still_frame import StillFrame
from gputop.ui.widgets.styled_line import StyledLine

if TYPE_CHECKING:
    from typing_extensions import Self

class GpuCard(StillFrame, FramedLines):
    """A card for one GPU; ``compact`` folds it into one line (two with MIG devices).

    Not focusable itself: the grid it sits in takes the focus and marks the chosen card.
    """

    class Selected(Message):
        """The user asked for this GPU's detail screen."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, index: int) -> None:
        super().__init__(id=f"gpu-{index}", classes="gpu-card")
        self.index = index
        self.content: CardContent | None = None
        self.compact = False
        self.filtered = False
        self._lines: list[StyledLine] = []
        # Each line's Strip as last drawn (None: not drawn since it changed), and the style under it.
        self._strips: list[Strip | None] = []
        self._strips_style: Style | None = None
        self._strip_styles = SparkStrips()
        self._titles: tuple[Text | None, Text | None] = (None, None)
        self._titles_from: tuple[CardContent, bool] | None = None  # the content and filter mark titled
        self._title_pieces: TitlePieces | None = None  # the titles shown, as pieces
        self._lines_width = -1
        # What the lines were last built from (the content, width, form and filter mark), and those
        # lines: a tick whose content compares equal keeps them.
        self._lines_from: tuple[CardContent, int, bool, bool] | None = None
        self._built: list[StyledLine] = []
        self._drawn: list[StyledLine] = []  # those lines before they were dimmed and fitted to the width
        # The sparklines as last drawn: a tick moves each on by a column rather than drawing it again.
        self._sparks = Sparklines()
        self._marked: tuple[bool, bool, bool] | None = None  # the -alert, -lost and -silent classes as set
        # Given by the grid: repaints the card's changed lines with the other cards' (``_repaint``).
        self.repaint_by: Callable[[GpuCard, list[Region]], None] | None = None
        # While a border title is set: the border line it is drawn on, the one line it repaints.
        self._retitled: Region | None = None

    def show(self, content: CardContent, compact: bool, height: int | None = None) -> None:
        """Show what the card is given (built once a tick), compact or full, ``height`` lines tall."""
        # Compared once here (a sample has some fifty fields; the layout hands the very contents shown last where
        # it found them equal): an equal content keeps the object shown, so
        # that what the titles and lines were built from compares by identity; another forgets both.
        previous = self.content
        if previous is not None and (content is previous or content == previous):
            content = previous
        else:
            self._titles_from = self._lines_from = None
        self.content = content
        gpu = content.gpu
        marked = (bool(content.alert_kinds), gpu.lost, not gpu.answering)
        if marked != self._marked:  # set only when one changed: each check costs more than the comparison
            self._marked = marked
            self.set_class(marked[0], "-alert")
            self.set_class(marked[1], "-lost")
            self.set_class(marked[2], "-silent")
        if compact != self.compact:
            self.compact = compact
            self.set_class(compact, "-compact")
        height = height or card_lines(gpu, compact)  # one line where the layout folds a MIG line
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height
        self._relayout()

    def on_resize(self, event: Resize) -> None:
        self._relayout()

    def _make_lines(self, width: int) -> list[StyledLine]:
        content = self.content
        if content is None:
            return []
        if not self.compact:
            titled = (content, self.filtered)
            if titled != self._titles_from:
                self._titles_from = titled
                pieces = title_pieces(content, self.filtered)
                if pieces != self._title_pieces:  # Rich Text made only for a title that changed
                    self._title_pieces = pieces
                    self._set_titles(*titles_text(pieces))
        # Building a card's lines costs ~0.2 ms; comparing the content it was given with the last costs
        # less. Then only the sparklines can have moved: each is moved on (a column for each value the
        # history grew by) and compared, as drawn, with the cells its line shows.
        lines_from = (content, width, self.compact, self.filtered)
        if lines_from == self._lines_from and width == self._lines_width:
            return self._moved_on(content, width)
        self._lines_from = lines_from
        if self.compact:
            lines = compact_lines(content, width, self.filtered, self._sparks)
        else:
            lines = full_lines(content, width, self._sparks)
        self._drawn = lines
        self._lines_width = width
        self._built = [self._finished(line, width) for line in lines]
        return self._built

    def _finished(self, line: StyledLine, width: int) -> StyledLine:
        """A line as built, as the card draws it: dimmed for a GPU not answering, fitted to the width."""
        dim = self.content is not None and not self.content.gpu.answering
        if isinstance(line, SparkLine) and line.cells and line.cell_length <= width:
            return line.finished(width, "dim" if dim else "")  # its head and tail kept apart: ``SparkStrips``
        if dim:
            line = line.stylized("dim")  # the line as built kept (``_drawn``) for the next tick
        return line.fit(width)

    def _moved_on(self, content: CardContent, width: int) -> list[StyledLine]:
        """The lines built last, each sparkline moved on; the very list kept where none drew other cells."""
        gpu, history, sparks = content.gpu, content.history, self._sparks
        drawn = built = None
        for y, line in enumerate(self._drawn):
            if isinstance(line, SparkLine):
                moved = line.moved_on(gpu, history, sparks)
                if moved is not None:
                    if drawn is None or built is None:
                        drawn, built = list(self._drawn), list(self._built)
                    was = built[y]  # the line finished last: only its sparkline's cells change
                    drawn[y] = moved
                    built[y] = was.with_cells(moved.cells) if isinstance(was, SparkLine) else (
                        self._finished(moved, width)
                    )
        if drawn is None or built is None:
            return self._built
        self._drawn, self._built = drawn, built
        return built

    def _relayout(self) -> None:
        if self.content is None:
            return
        # The content's width from the card's own size: ``content_size`` finds the card on the screen first.
        width = max(0, self.outer_size.width - self.styles.gutter.width)
        lines = self._make_lines(width)
        old = self._lines
        if lines is old:
            return  # built from what they were built from last time: nothing to repaint
        self._lines = lines
        if len(old) != len(lines) or len(self._strips) != len(lines):
            self._strips = [None] * len(lines)
            self.refresh()
            return
        strips = self._strips
        changed = []
        for y, (before, after) in enumerate(zip(old, lines, strict=True)):
            if before is not after and before != after:  # a line kept is the same object
                strips[y] = None
                changed.append(Region(0, y, width, 1))
        if changed:
            self._repaint(changed)

    def _repaint(self, changed: list[Region]) -> None:
        """Lines of content changed (regions of the content): drawn afresh when next asked for. Where the
        grid repaints its cards together (``repaint_by``) and the card's lines are set in its frame, not
        drawn through Textual's styles, the card forgets them and the grid has them repainted; else the card
        refreshes them itself (one refresh for them all: each works out the offset and clears caches)."""
        repaint_by, frame = self.repaint_by, self.current_frame()
        if repaint_by is None or frame is None:
            self.refresh(*changed)
            return
        self._still = None
        frame.forget(changed)
        repaint_by(self, changed)

    def set_filtered(self, filtered: bool) -> None:
        """Mark the card whose GPU the process panel is filtered to (0-9, #)."""
        if filtered != self.filtered:
            self.filtered = filtered
            self.set_class(filtered, "-filtered")
            self._relayout()

    def _set_titles(self, title: Text, subtitle: Text | None) -> None:
        # Only when the text changed, and then only the border line it is drawn on is repainted: Textual
        # repaints the whole card for a new title (``refresh``), every line of it through its styles.
        # A title equal to the one shown is kept, the same object: the frame compares titles by identity.
        old_title, old_subtitle = self._titles
        if title != old_title:
            self._titles = (title, old_subtitle)
            self._retitle(0, title, top=True)
        if subtitle != old_subtitle:
            self._titles = (self._titles[0], subtitle)
            self._retitle(self.outer_size.height - 1, subtitle, top=False)

    def _retitle(self, y: int, title: Text | None, *, top: bool) -> None:
        """Set the border title (``top``) or subtitle, drawn on the card's line ``y`` (its border)."""
        offset = self.content_offset  # a refreshed region is the content's: the border is above or below it
        self._retitled = Region(-offset.x, y - offset.y, self.outer_size.width, 1)
        try:
            if top:
                self.border_title = title
            else:
                self.border_subtitle = title
        finally:
            self._retitled = None

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        retitled = self._retitled
        if retitled is not None and not regions and repaint and not layout and not recompose:
            regions = (retitled,)  # a new title: its border line alone
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def frame_titles(self) -> tuple[object, object]:
        return self._titles

    def draw_lines(self, crop: Region) -> list[Strip]:
        """The card's lines: its content set in the frame Textual drew around it (``card_frame``)."""
        return self.framed_lines(crop, super().draw_lines)

    def _lines_at(self, width: int, base: Style) -> list[StyledLine]:
        """The lines to draw at ``width`` on ``base``: each Strip drawn on another base forgotten."""
        strips_style = self._strips_style
        stale = base is not strips_style and base != strips_style
        if width != self._lines_width or stale or len(self._strips) != len(self._lines):
            if width != self._lines_width:
                # A new card is shown before its first layout: draw it at the size it is painted at,
                # rather than paint it twice.
                self._lines = self._make_lines(width)
            self._strips, self._strips_style = [None] * len(self._lines), base
        return self._lines

    def finished_line(self, y: int, frame: CardFrame) -> Strip | None:
        # A line with a sparkline is set in the frame from its head and tail as finished there the tick
        # before, and its cells: only they moved (``SparkStrips.finished``).
        base = self.line_style
        lines = self._lines_at(self.frame_width, base)
        return self._strip_styles.finished(y, lines[y], base, frame) if y < len(lines) else None

    def render_line(self, y: int) -> Strip:
        width = self.frame_width
        base = self.line_style
        if y >= len(self._lines_at(width, base)):
            return Strip.blank(width, base)
        strip = self._strips[y]
        if strip is None:
            strip = self._strips[y] = self._strip_styles.strip(y, self._lines[y], base, width)
        return strip

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Selected(self.index))
