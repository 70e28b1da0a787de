"""A process table's lines, as plain logic: a line built of runs of one style, a cell fitted to its
column, which row the cursor goes to, and whether a row shows what it showed last tick but for its TIME."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from gputop.core.text_cut import cut_end
from gputop.ui.widgets.rows import Column, ProcessRow, RowKey, SortOrder
from gputop.ui.widgets.styled_line import text_cells

TAG_MARK = "●"
HOST_COLUMNS = frozenset({"cpu", "host_memory", "time", "job", "container", "command"})
# What a launcher's row (in the tree) shows: it holds no GPU of its own.
LAUNCHER_COLUMNS = frozenset({"pid", "user", "gpu_memory", "container", "command"})


def same_but_time(before: ProcessRow, now: ProcessRow) -> bool:
    """Whether a row shows what it showed last tick but for its TIME: the same process sample
    (the sampler keeps the object while nothing about the process changed) and the same figures.
    The growth rate and the idle seconds show only while the process is growing or idle: an idle
    time that grows under the threshold changes no cell."""
    return (
        before.process is now.process
        and before.gpu_memory_total == now.gpu_memory_total
        and before.growing == now.growing
        and (not now.growing or before.growth_rate == now.growth_rate)
        and before.idle == now.idle
        and (not now.idle or before.idle_seconds == now.idle_seconds)
        and before.unattributed == now.unattributed
        and before.guide == now.guide
        and before.subtree_memory == now.subtree_memory
        and before.launcher == now.launcher
        and before.folded == now.folded
    )


def process_after(rows: list[ProcessRow], index: int | None, step: int) -> RowKey | None:
    """Where the cursor goes from row ``index`` (None: no cursor) ``step`` rows on: that row, or the
    nearest process beyond it in the same direction, else the nearest before it; None: no process
    row to go to. The cursor is never put on a ``(no process)`` row: on the last process, Down
    stays there; at ``step`` 0, the row at ``index`` or the nearest process below, else above."""
    if not rows:
        return None
    target = 0 if index is None else max(0, min(len(rows) - 1, index + step))
    ahead = rows[target:] if step >= 0 else list(reversed(rows[: target + 1]))
    back = list(reversed(rows[:target])) if step >= 0 else rows[target + 1 :]
    for row in [*ahead, *back]:
        if not row.unattributed:
            return row.key
    return None


@lru_cache(maxsize=1024)  # a row's cells are much as they were last tick: each is fitted once, not per line
def fit(text: str, width: int, right: bool) -> str:
    """``text`` padded to ``width`` cells, cut (with "…") where it is longer."""
    text = cut_end(text, width)
    if text_cells(text) > width:  # a character Rich counts wider than gputop does: Rich's count wins
        text = set_cell_size(text, max(0, width - 1)) + "…" if width > 0 else ""
    pad = " " * (width - text_cells(text))
    return pad + text if right else text + pad


class Line:
    """A table line built left to right, neighbours of one style joined into one segment.

    A row has two dozen cells and spaces, nearly all in the row's style: as one segment per run of
    a style, Textual measures, crops and recolours a handful of segments instead of two dozen. Its
    width is counted as it is built, so Textual need not measure it again.
    """

    def __init__(self, text: str, style: Style) -> None:
        self.segments: list[Segment] = []
        self._texts = [text]
        self._style = style
        self.length = text_cells(text)  # in cells
        # Each live cell (``add_live``): its segment's place, that segment's texts, its place among them,
        # its column's place, width and side.
        self.holes: list[tuple[int, list[str], int, int, int, bool]] = []

    def add(self, text: str, style: Style, cells: int | None = None) -> None:
        """Add ``text`` in ``style``; ``cells``: its width where the caller knows it (a fitted cell)."""
        if style is not self._style:
            self.segments.append(Segment("".join(self._texts), self._style))
            self._texts, self._style = [], style
        self._texts.append(text)
        self.length += text_cells(text) if cells is None else cells

    def add_live(self, text: str, style: Style, cells: int, at: int, right: bool) -> None:
        """Add the fitted cell of the live column at ``at`` (``cells`` wide, on the ``right``), noting where it
        is: the line can be drawn again with another (``row_line.RowLine``)."""
        self.add(text, style, cells)
        texts = self._texts
        self.holes.append((len(self.segments), texts, len(texts) - 1, at, cells, right))

    def strip(self, width: int, style: Style) -> Strip:
        """The line, cropped or padded (in ``style``) to ``width`` cells."""
        self.segments.append(Segment("".join(self._texts), self._style))
        strip = Strip(self.segments, self.length)
        # A row is built exactly as wide as the panel: then cropping or padding it would make the same strip.
        return strip if self.length == width else strip.crop_extend(0, width, style)


def header_strip(
    columns: Iterable[Column], widths: list[int], order: SortOrder, style: Style, sorted_style: Style, width: int
) -> Strip:
    """A table's header line: each column's title, the sort column's marked ▼ or ▲ in ``sorted_style``."""
    line = Line(" ", style)
    for number, (column, column_width) in enumerate(zip(columns, widths, strict=True)):
        title = column.title
        is_sorted = column.name == order.column
        if is_sorted:
            title += "▼" if order.descending else "▲"
        if number:
            line.add(" ", style)
        line.add(fit(title, column_width, column.right), sorted_style if is_sorted else style)
    return line.strip(width, style)
