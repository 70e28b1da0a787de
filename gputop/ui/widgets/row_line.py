"""A process row's line, drawn once and then again with its live cells alone: where a row shows what it
showed but for TIME, GROWTH or IDLE (the clock moved), only those cells are fitted and set in the segments
around them, the rest of the line kept.

On a tick whose processes did not change, every row on screen changes its TIME and nothing else; building
each line again (a dozen cells fitted, two dozen runs joined, the row's styles added up) cost four times what
setting three cells in the line kept does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from gputop.ui.widgets.rows import Column, ProcessRow
from gputop.ui.widgets.table_line import HOST_COLUMNS, TAG_MARK, Line, fit


class RowStyles:
    """The styles of a row's line: the row's own (hidden, stale, tagged, under the cursor), its GPU memory's,
    a growing or idle process's GROWTH and IDLE, and what the filter matched in its command."""

    __slots__ = ("row", "memory", "growing", "match")

    def __init__(self, row: Style, memory: Style, growing: Style, match: Style | None = None) -> None:
        self.row, self.memory, self.growing = row, memory, growing
        self.match = row if match is None else match

    @classmethod
    def of(
        cls, row: ProcessRow, base: Style, component: Callable[[str], Style], *, tagged: bool, cursor: bool
    ) -> RowStyles:
        """A row's styles on the table's ``base``, from the table's ``component`` styles."""
        style = base
        if not row.process.visible:
            style += component("process-table--hidden")
        if row.process.stale:
            style += component("process-table--stale")
        if tagged:
            style += component("process-table--tagged")
        if cursor:
            style += component("process-table--cursor")
        return cls(
            style,
            style + component("process-table--memory"),
            style + component("process-table--growing"),
            style + component("process-table--match"),
        )


class DrawnRow:
    """A row drawn (or about to be): the row, its cells now, the cells it was made with (the same object
    while only its live cells moved), and its line as last drawn (None: not drawn yet)."""

    __slots__ = ("row", "cells", "made_with", "line")

    def __init__(self, row: ProcessRow, cells: tuple[str, ...]) -> None:
        self.row, self.cells, self.made_with = row, cells, cells
        self.line: RowLine | None = None


class RowLine:
    """A row's line as drawn, and what it was drawn from but its live cells (``made_of``, compared as a
    whole): drawn ``again`` with other live cells where that is the same."""

    __slots__ = ("made_of", "strip", "_segments", "_holes", "_length", "_cells")

    def __init__(self, made_of: tuple[object, ...], line: Line, strip: Strip, cells: tuple[str, ...]) -> None:
        self.made_of, self.strip = made_of, strip
        self._segments = line.segments
        self._holes = line.holes
        self._length = strip.cell_length
        self._cells = cells  # the cells it was last drawn with

    def again(self, cells: tuple[str, ...]) -> Strip:
        """The line with the live cells of ``cells`` (each fitted to its column), the rest as it was drawn."""
        drawn, self._cells = self._cells, cells
        changed: list[int] = []
        for segment, texts, place, at, width, right in self._holes:
            if cells[at] != drawn[at]:
                texts[place] = fit(cells[at], width, right)
                if segment not in changed:
                    changed.append(segment)
        if changed:
            segments = self._segments  # the strip made of them has its own list: this one is the line's
            for segment in changed:
                texts = next(hole[1] for hole in self._holes if hole[0] == segment)
                segments[segment] = Segment("".join(texts), segments[segment].style)
            self.strip = Strip(segments, self._length)
        return self.strip


def row_line(
    row: ProcessRow,
    cells: tuple[str, ...],
    columns: Sequence[Column],
    widths: Sequence[int],
    width: int,
    *,
    command: str | None,
    tagged: bool,
    styles: RowStyles,
    live_at: tuple[int, ...],
    made_of: tuple[object, ...],
    match: re.Pattern[str] | None = None,
) -> tuple[Strip, RowLine | None]:
    """A row's line ``width`` cells wide: the tag mark, then each cell fitted to its column (``command``: the
    COMMAND column's as cut, what ``match``, the filter's pattern, finds in it marked), a space between them;
    a hidden process's row says why from its first host column on. With it, the line kept to be drawn again
    (None where it is not exactly ``width`` wide)."""
    style = styles.row
    line = Line(TAG_MARK if tagged else " ", style)
    used = 1
    visible = row.process.visible
    # A space between columns (not after the last: the line is then exactly as wide as the panel).
    for at, (column, column_width, cell) in enumerate(zip(columns, widths, cells, strict=True)):
        name = column.name
        if used > 1:
            line.add(" ", style, 1)
        if not visible and name in HOST_COLUMNS:
            # Nothing is known from the CPU column on: say why across the rest of the line.
            line.add(fit(row.hidden_text, width - used, False), style)
            break
        cell_style = styles.memory if name == "gpu_memory" else style
        if (name == "growth" and row.growing) or (name == "idle" and row.idle):
            cell_style = styles.growing
        if name == "command":
            cell = command or ""  # the one cut of the column
        fitted = fit(cell, column_width, column.right)
        if name == "command" and match is not None:
            _add_marked(line, fitted, len(cell), match, cell_style, styles.match)
        elif at in live_at:
            line.add_live(fitted, cell_style, column_width, at, column.right)
        else:
            line.add(fitted, cell_style, column_width)
        used += column_width + 1
    strip = line.strip(width, style)
    return strip, (RowLine(made_of, line, strip, cells) if line.length == width else None)


def _add_marked(line: Line, text: str, shown: int, match: re.Pattern[str], style: Style, marked: Style) -> None:
    """``text`` (a cell, its first ``shown`` characters the command, the rest the column's padding) added to
    ``line``, each stretch of the command that ``match`` finds in ``marked`` (as ``less`` marks what was
    searched for); a stretch cut by the column's "…" is found, and marked, only where it shows."""
    done = 0
    for found in match.finditer(text, 0, shown):
        start, end = found.span()
        if end > start:
            if start > done:
                line.add(text[done:start], style)
            line.add(text[start:end], marked)
            done = end
    if done < len(text) or not text:
        line.add(text[done:], style)
