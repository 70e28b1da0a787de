"""A card's finished lines (and the host strip's, a process table's): its border, padding and background
taken once from Textual's own drawing, each changed line of content set between them.

Textual draws every changed line of a widget through its styles cache: the styles read again, the border
and padding worked out, the background colours of every ancestor, tint and opacity, then the app's line
filters; ~70 us a line on a small machine, against ~7 us to build the card's line itself. Yet what goes
around a card's content depends only on its styles, its size, its titles and the filters, none of which a
tick changes: ``CardFrame`` asks Textual to draw the whole card once (so it is Textual's drawing, cell for
cell), keeps its border and padding rows, and cuts the cells left and right of the content off its first
line of content. A line of content is then those cells, the card's own line through the same filters, and
the cells on the right: what Textual draws, because the filters Textual has act segment by segment.

Anything else is drawn by Textual as before (``CardFrame.of`` gives None): a tint, an opacity, a text
opacity, a hatch, an outline, a filter this module does not know to act segment by segment, a card too small
to have a line of content. Border and padding rows are drawn by Textual again when their title changes;
the frame is forgotten whenever Textual would forget its own (a whole refresh, a new stylesheet, a new size
or set of filters: ``FramedLines``). No private Textual name is used: ``Widget.render_lines`` is the drawing
taken, the rest is ``Strip``, ``Segment`` and the filters' public ``apply``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import ANSIToTruecolor, DimFilter, LineFilter, Monochrome, NoColor
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from gputop.ui.terminal.plain_terminal import NoColour
from gputop.ui.widgets.frame_style import FrameStyled

if TYPE_CHECKING:
    from typing_extensions import Self

# The line filters an app of gputop's can have (Textual's own, gputop's NO_COLOR), each of which maps every
# segment on its own (its text and style alone): a line's parts filtered apart join into the line filtered whole.
_SEGMENT_WISE: tuple[type[LineFilter], ...] = (ANSIToTruecolor, Monochrome, NoColor, DimFilter, NoColour)

# The styles a frame keeps what the filters make of before it starts again: a card's few dozen, a process
# table's few hundred; reached only where styles are made afresh every frame.
_MOST_STYLES = 4096

# A segment made without NamedTuple's __new__ (a third of a line's finishing): the same tuple.
_segment = tuple.__new__

# Draws a region of the widget as Textual does (its styles cache, the filters).
Draw = Callable[[Region], list[Strip]]


def textual_drawing_needed(widget: Widget, filters: Sequence[LineFilter]) -> bool:
    """Whether anything on ``widget`` is drawn by Textual in a way ``CardFrame`` does not repeat."""
    styles = widget.styles
    if styles.tint.a or styles.text_opacity != 1.0 or widget.opacity != 1.0:
        return True
    if styles.has_rule("hatch") or any(edge for edge, _ in styles.outline):
        return True
    return not all(isinstance(line_filter, _SEGMENT_WISE) for line_filter in filters)


class CardFrame:
    """What goes around a card's content at one size, for one set of filters: its border and padding
    rows (each with the title it was drawn with) and the cells either side of a line of content."""

    __slots__ = (
        "size", "filters", "top", "bottom", "content_width", "left", "right", "background",
        "_rows", "_finished", "_draw", "_left", "_right", "_filtered", "_held",
    )

    def __init__(
        self, size: Size, filters: tuple[LineFilter, ...], gutter: tuple[int, int, int, int], drawn: list[Strip],
        background: Color, draw: Draw,
    ) -> None:
        top, right, bottom, left = gutter
        width, height = size
        self.size, self.filters, self.background, self._draw = size, filters, background, draw
        self.top, self.bottom = top, height - bottom  # content rows: top <= y < bottom
        self.content_width = width - left - right
        first = drawn[top]
        self.left, self.right = first.crop(0, left), first.crop(width - right, width)
        self._left, self._right = list(self.left), list(self.right)
        # By a style's id, what the filters make of it: a look-up that runs no Python code, where a Style's
        # own hash is a Python method. Each style is held in ``_held`` so that its id stays its own.
        self._filtered: dict[int, Style | None] = {}
        self._held: list[Style | None] = []
        # Each border or padding row, and the title it shows (None: it shows none); filled in as drawn.
        self._rows: dict[int, tuple[object, Strip]] = {}
        # Each line of content as last finished, by row, until the card refreshes its line.
        self._finished: dict[int, Strip] = {}

    @classmethod
    def of(
        cls, widget: Widget, size: Size, filters: tuple[LineFilter, ...], titles: tuple[object, object], draw: Draw
    ) -> CardFrame | None:
        """The frame of ``widget`` as Textual draws it now (``draw``); None where Textual must draw it."""
        if textual_drawing_needed(widget, filters) or widget.scrollbar_size_horizontal:
            return None
        # A vertical scrollbar's gutter is on the right of the content: Textual draws the line of content
        # there as wide as the content, filled with its background, and the scrollbar (a widget of its own)
        # over it. The cells on the right of a line are those, then the border.
        top, right, bottom, left = widget.gutter
        width, height = size
        if width - left - right <= 0 or height - top - bottom <= 0:
            return None
        drawn = draw(Region(0, 0, width, height))
        if len(drawn) != height or any(strip.cell_length != width for strip in drawn):
            return None  # drawn at another size than the card's (before its first layout): Textual's
        frame = cls(size, filters, (top, right, bottom, left), drawn, widget.background_colors[1], draw)
        for y in (*range(top), *range(height - bottom, height)):
            frame._rows[y] = (frame._title_of(y, titles), drawn[y])
        frame._finished.update((y, drawn[y]) for y in range(top, height - bottom))  # Textual's, as drawn
        return frame

    def _title_of(self, y: int, titles: tuple[object, object]) -> object:
        """The title row ``y`` shows: the title on the first row, the subtitle on the last, else none."""
        if y == 0:
            return titles[0]
        return titles[1] if y == self.size.height - 1 else None

    def forget(self, regions: Sequence[Region]) -> None:
        """Lines of content refreshed (``regions`` of the content, as ``Widget.refresh`` takes them): they
        are finished again from the card's lines when next drawn."""
        # Asked each tick for every changed line of a card or the panel: a Region is a tuple, unpacked in C.
        finished, top = self._finished, self.top
        pop = finished.pop
        for _x, y, _width, height in regions:
            if height == 1:
                pop(top + y, None)
            else:
                for line in range(top + y, top + y + height):
                    pop(line, None)

    def _finish(self, y: int, line: Strip) -> Strip:
        """Row ``y``, a line of content: the cells on its left, ``line`` through the filters, those on its right."""
        if line.cell_length != self.content_width:  # not the content's width: Textual fits it
            return self._draw(Region(0, y, self.size.width, 1))[0]
        filtered = self.filtered(line)
        if filtered is None:  # a control code: Textual's filters, as they take it
            return self._filter_whole(line)
        return Strip(self._left + filtered + self._right, self.size.width)

    def filtered(self, segments: Sequence[Segment] | Strip) -> list[Segment] | None:
        """``segments`` through the filters, as ``Strip.apply_filter`` makes them (each style mapped once: a
        filter maps a segment by its style); None where one is a control code."""
        styles = self._filtered
        try:
            filtered = [
                _segment(Segment, (text, styles[id(style)], None)) for text, style, control in segments if not control
            ]
        except KeyError:  # a style not met yet
            if len(styles) >= _MOST_STYLES:
                styles.clear()
                self._held.clear()
            for _text, style, _control in segments:
                if id(style) not in styles:
                    styles[id(style)] = self._through_filters(style)
                    self._held.append(style)
            return self.filtered(segments)
        return None if len(filtered) != len(segments) else filtered

    @property
    def edges(self) -> tuple[list[Segment], list[Segment]]:
        """The segments left and right of a line of content (the very lists: not to be changed)."""
        return self._left, self._right

    def _through_filters(self, style: Style | None) -> Style | None:
        """What the filters make of a segment in ``style``."""
        probe = [Segment(" ", style)]
        for line_filter in self.filters:
            probe = line_filter.apply(probe, self.background)
        return probe[0].style

    def _filter_whole(self, line: Strip) -> Strip:
        for line_filter in self.filters:
            line = line.apply_filter(line_filter, self.background)
        return Strip.join((self.left, line, self.right))

    def lines(
        self, crop: Region, titles: tuple[object, object], content: Callable[[int], Strip],
        finished_content: Callable[[int, CardFrame], Strip | None] | None = None,
    ) -> list[Strip]:
        """The card's lines in ``crop``, finished: ``content(y)`` is its line of content ``y``, as wide as
        the content; ``titles``: the title and subtitle now (compared by identity); ``finished_content(y,
        frame)``, where given, line of content ``y`` finished by the widget itself (None: finished here)."""
        strips: list[Strip] = []
        top, bottom, rows, finished = self.top, self.bottom, self._rows, self._finished
        for y in crop.line_range:
            if top <= y < bottom:
                strip = finished.get(y)
                if strip is None and finished_content is not None:
                    strip = finished_content(y - top, self)
                    if strip is not None:
                        finished[y] = strip
                if strip is None:
                    strip = finished[y] = self._finish(y, content(y - top))
                strips.append(strip)
                continue
            title = self._title_of(y, titles)
            row = rows.get(y)
            if row is None or row[0] is not title:
                row = rows[y] = (title, self._draw(Region(0, y, self.size.width, 1))[0])
            strips.append(row[1])
        if crop.column_span != (0, self.size.width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips


class FramedLines(FrameStyled):
    """A line-API widget whose lines are set in its ``CardFrame`` (``framed_lines``): the GPU cards, the
    host strip, the process tables (inside their scrollbar). The frame is taken again whenever Textual would
    draw the widget whole again."""

    _frame: CardFrame | None = None
    # The size, scrollbar gutter and filters it was taken at.
    _frame_for: tuple[Size, int, tuple[LineFilter, ...]] | None = None

    def frame_titles(self) -> tuple[object, object]:
        """The border title and subtitle shown now, each the same object while it reads the same."""
        return (None, None)

    def finished_line(self, y: int, frame: CardFrame) -> Strip | None:
        """Line of content ``y`` finished in ``frame`` by the widget itself, as ``frame`` finishes
        ``render_line(y)``; None (the default): ``frame`` finishes it."""
        return None

    def current_frame(self) -> CardFrame | None:
        """The frame the widget's lines are set in now, if it was taken at its present size and scrollbar
        (and the filters it was taken with, which a new set of filters forgets): else None."""
        frame = self._frame
        if frame is None or self._frame_for != (self.outer_size, self.scrollbar_size_vertical, frame.filters):
            return None
        return frame

    def framed_lines(self, crop: Region, draw: Draw) -> list[Strip]:
        """The lines of ``crop``, finished in the frame; ``draw``: Textual's drawing of a region."""
        size, filters = self.outer_size, tuple(self.get_line_filters())
        frame_for = (size, self.scrollbar_size_vertical, filters)  # a scrollbar shown or gone: another frame
        if self._frame_for != frame_for:
            self._frame_for = frame_for
            self._frame = CardFrame.of(self, size, filters, self.frame_titles(), draw)
        frame = self._frame
        if frame is None or (self.auto_links and self.hover_style.link_id):
            return draw(crop)
        self._frame_width = frame.content_width
        try:
            return frame.lines(crop, self.frame_titles(), self.render_line, self.finished_line)
        finally:
            self._frame_width = None

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if not regions:  # a style set in code, a new size: Textual draws the whole widget again
            self._frame_for = None
        elif self._frame is not None:
            self._frame.forget(regions)
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def notify_style_update(self) -> None:
        self._frame_for = None
        super().notify_style_update()
