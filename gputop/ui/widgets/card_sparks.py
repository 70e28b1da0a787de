"""The sparklines on a card's lines, and the lines that hold one (``SparkLine``).

A line with a sparkline is its head, the sparkline and its tail. While a card shows the same content
(equal ``CardContent``, width, form and filter mark), only its sparklines can move: their history grows
a value a tick. Such a line keeps its head and tail, so that a tick that moves only the sparklines draws
them alone (``SparkLine.moved_on``) instead of building every figure, bar and label of the card again.
What it draws is what building the line afresh draws. A line finished for the card (dimmed, padded to its
width) stays a head, a sparkline and a tail, and its Strip is made of the head's and tail's segments, styled
once, and the sparkline's (``SparkStrips``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from gputop.core.analysis.history import GpuHistory
from gputop.core.model import GpuSample
from gputop.ui.widgets.sparkline import Sparklines, sparkline
from gputop.ui.widgets.styled_line import StripStyles, StyledLine, under

if TYPE_CHECKING:
    from gputop.ui.widgets.card_frame import CardFrame

# A segment made without NamedTuple's __new__: the same tuple.
_segment = tuple.__new__

# The history's series each sparkline draws, by the name the card keeps its drawing under.
_SERIES = {"memory": "memory_used", "utilization": "utilization", "temperature": "temperature", "sm": "sm_active"}


class Spark(NamedTuple):
    """One sparkline of a card: its series (``_SERIES``), ``width`` cells, between ``low`` and ``high``
    (None: memory, against the GPU's size or the last one the history knew), drawn in ``style``."""

    series: str
    width: int
    low: float
    high: float | None
    style: str

    def draw(self, gpu: GpuSample, history: GpuHistory | None, sparks: Sparklines | None) -> str:
        """The sparkline of ``history``: moved on from the card's last drawing of it where the card keeps
        them (``sparks``), drawn anew otherwise; blank without a history."""
        if history is None:
            return sparkline((), self.width, self.low, 1.0)
        high = self.high if self.high is not None else float(gpu.memory_total or history.memory_total or 1)
        values = getattr(history, _SERIES[self.series])
        if sparks is None:
            return sparkline(values, self.width, self.low, high)
        return sparks.draw(self.series, values, history.timestamps, self.width, self.low, high, source=history)


class SparkLine(StyledLine):
    """A card's line with a sparkline in it: ``head``, the sparkline (``spark``) as drawn (``cells``),
    ``tail`` (None: nothing)."""

    __slots__ = ("head", "spark", "tail", "cells")

    def __init__(self, head: StyledLine, spark: Spark, tail: StyledLine | None, cells: str) -> None:
        # Not StyledLine's __init__: the pieces are the head's, the sparkline's and the tail's, as they are.
        self.head, self.spark, self.tail, self.style, self.cells = head, spark, tail, head.style, cells
        pieces = [*head.pieces, (cells, spark.style)] if cells else list(head.pieces)
        length = head.cell_length + len(cells)  # a sparkline's cells are one cell wide each: block elements
        if tail is not None:
            pieces += tail.pieces
            length += tail.cell_length
        self.pieces, self.cell_length = pieces, length

    @classmethod
    def drawn(
        cls, head: StyledLine, spark: Spark, tail: StyledLine | None, gpu: GpuSample, history: GpuHistory | None,
        sparks: Sparklines | None,
    ) -> SparkLine:
        """The line with its sparkline drawn from ``history`` (moved on from ``sparks`` where given)."""
        return cls(head, spark, tail, spark.draw(gpu, history, sparks))

    def moved_on(self, gpu: GpuSample, history: GpuHistory | None, sparks: Sparklines | None) -> SparkLine | None:
        """The same line with its sparkline drawn from ``history`` as it is now; None where that draws
        the very cells the line shows (a card then keeps the line it has)."""
        cells = self.spark.draw(gpu, history, sparks)
        return None if cells == self.cells else SparkLine(self.head, self.spark, self.tail, cells)

    def finished(self, width: int, over: str) -> SparkLine:
        """The line as a card draws it: ``over`` (a style, "" for none) over every piece, padded to ``width``
        (as ``stylized(over).fit(width)``), kept as its head, sparkline and tail; for a line that fits."""
        head, spark, tail = self.head, self.spark, StyledLine(style=self.style)
        if self.tail is not None:
            tail.pieces, tail.cell_length = list(self.tail.pieces), self.tail.cell_length
        if over:
            head, spark = head.stylized(over), spark._replace(style=under(spark.style, over))
            tail.stylize(over)
        return SparkLine(head, spark, tail.append(" " * (width - self.cell_length)), self.cells)

    def with_cells(self, cells: str) -> SparkLine:
        """The same line showing the sparkline's ``cells`` instead, its head and tail the very same."""
        return SparkLine(self.head, self.spark, self.tail, cells)


# What ``SparkStrips.finished`` keeps of a line (see ``SparkStrips._framed``).
_Framed = tuple[
    list[Segment], list[Segment], "CardFrame", tuple[str, str], list[Segment], str, str, "Style | None", list[Segment]
]


class SparkStrips:
    """A card's lines as Strips, by line: one with a sparkline whose head and tail are those of the line drawn
    there before (only its cells moved) reuses their segments, styled then; any other is styled whole. Such a
    line set in the card's frame (``finished``) reuses its head and tail as finished there too."""

    def __init__(self) -> None:
        self._styles = StripStyles()
        # By line: the head and tail last styled there, the styles' table on the base under them (the very
        # objects their segments hold, which the sparkline's join by), and their segments.
        self._parts: dict[
            int, tuple[StyledLine, StyledLine | None, dict[str, Style], list[Segment], list[Segment]]
        ] = {}
        # By line: what ``finished`` sets in a frame: the head's and tail's segments, the frame and the line's
        # and sparkline's styles they were set in; the segments left of the cells (the cells on the left of the
        # content, the head's), through the filters; the text of the head's last and the tail's first segment
        # where the cells join it (one style: one segment, as ``strip`` joins them; else ""); the cells' style
        # through the filters; the segments right of the cells (the tail's, the cells on the right).
        self._framed: dict[int, _Framed] = {}

    def strip(self, y: int, line: StyledLine, base: Style, width: int) -> Strip:
        """Line ``y``, ``line``, on ``base`` as a Strip ``width`` cells wide (``StripStyles.strip``)."""
        if not isinstance(line, SparkLine) or not line.cells or line.cell_length != width:
            return self._styles.strip(line, base, width)
        head, tail = self._head_and_tail(y, line, base)
        segments = self._joined(list(head), line, base, tail[:1])
        segments += tail[1:]
        return Strip(segments, width)

    def finished(self, y: int, line: StyledLine, base: Style, frame: CardFrame) -> Strip | None:
        """Line ``y`` set in ``frame``: what ``frame`` makes of ``strip(y, line, base, width)``, its head and
        tail finished once; None for a line this does not finish (then the frame finishes the strip)."""
        if not isinstance(line, SparkLine) or not line.cells or line.cell_length != frame.content_width:
            return None
        head, tail = self._head_and_tail(y, line, base)
        parts = self._framed.get(y)
        if (
            parts is None or parts[0] is not head or parts[1] is not tail or parts[2] is not frame
            or parts[3] != (line.style, line.spark.style)
        ):
            parts = self._frame_parts(line, base, head, tail, frame)
            if parts is None:
                return None
            self._framed[y] = parts
        cells = _segment(Segment, (parts[5] + line.cells + parts[6], parts[7], None))
        return Strip([*parts[4], cells, *parts[8]], frame.size.width)

    def _frame_parts(
        self, line: SparkLine, base: Style, head: list[Segment], tail: list[Segment], frame: CardFrame
    ) -> _Framed | None:
        """What ``finished`` keeps of a line (``_framed``); None where the frame cannot filter it segment by
        segment (a control code)."""
        (cells,) = self._styles.segments([(line.cells, line.spark.style)], line.style, base)
        joins_head = bool(head) and head[-1].style is cells.style
        joins_tail = bool(tail) and tail[0].style is cells.style
        before = frame.filtered(head[:-1] if joins_head else head)
        after = frame.filtered(tail[1:] if joins_tail else tail)
        style = frame.filtered([cells])
        if before is None or after is None or style is None:
            return None
        left, right = frame.edges
        return (
            head, tail, frame, (line.style, line.spark.style), left + before,
            head[-1].text if joins_head else "", tail[0].text if joins_tail else "", style[0].style, after + right,
        )

    def _head_and_tail(self, y: int, line: SparkLine, base: Style) -> tuple[list[Segment], list[Segment]]:
        """The segments of ``line``'s head and tail on ``base``: those styled last at line ``y`` while they
        are the same head and tail on the same base."""
        styles = self._styles
        parts, table = self._parts.get(y), styles.table(base)
        if parts is None or parts[0] is not line.head or parts[1] is not line.tail or parts[2] is not table:
            outer = line.style
            tail = styles.segments(line.tail.pieces, outer, base) if line.tail is not None else []
            parts = self._parts[y] = (line.head, line.tail, table, styles.segments(line.head.pieces, outer, base), tail)
        return parts[3], parts[4]

    def _joined(self, segments: list[Segment], line: SparkLine, base: Style, then: list[Segment]) -> list[Segment]:
        """``segments``, then the sparkline's cells, then ``then``: neighbours of one style one segment, as
        ``StripStyles.strip`` joins them."""
        for segment in (*self._styles.segments([(line.cells, line.spark.style)], line.style, base), *then):
            last = segments[-1] if segments else None
            if last is not None and last.style is segment.style:
                segments[-1] = Segment(last.text + segment.text, last.style)
            else:
                segments.append(segment)
        return segments
