"""The sparklines on a card's lines, and the lines that hold one (``SparkLine``).

A line with a sparkline is its head, the sparkline and its tail. While a card shows the same content
(equal ``CardContent``, width, form and filter mark), only its sparklines can move: their history grows
a value a tick. Such a line keeps its head and tail, so that a tick that moves only the sparklines draws
them alone (``SparkLine.moved_on``) instead of building every figure, bar and label of the card again.
What it draws is what building the line afresh draws.
"""

from __future__ import annotations

from typing import NamedTuple

from gputop.core.analysis.history import GpuHistory
from gputop.core.model import GpuSample
from gputop.ui.widgets.sparkline import Sparklines, sparkline
from gputop.ui.widgets.styled_line import StyledLine

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
