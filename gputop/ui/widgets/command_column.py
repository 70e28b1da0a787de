"""A process table's COMMAND column: how each row's command is cut to the column, and where it is scrolled.

A command too long for its column is cut in the middle (``core/output/command_text.fit_command``), keeping in
view what a filter matched in it, else what tells it from its siblings (the ranks of one job, the trials of one
sweep: ``--local-rank 2``). ← and → scroll the column sideways (every row together, as in nvitop and htop),
Ctrl+A and Ctrl+E go to either end.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gputop.core.output.command_text import fit_command, sibling_spans
from gputop.core.text_cut import cells, last_start
from gputop.ui.widgets.rows import COLUMN_BY_NAME, ProcessRow, RowKey

# How far one ← or → scrolls, in characters.
SCROLL_STEP = 8
# Ctrl+E: every row scrolled to its end (each stops where its end shows).
TO_THE_END = 1 << 30

# What a row's command cell is made of: a process's CPU and memory change every tick, its command hardly ever.
_MadeOf = tuple[str | None, str | None, bool, bool, str | None, str, int]


class CommandColumn:
    """The column's scroll position, the filter's pattern, and each row's command whole and as cut."""

    def __init__(self) -> None:
        self.start = 0  # 0: each command cut in the middle; more: every command from that character on
        self.match: re.Pattern[str] | None = None
        self._rows: Sequence[ProcessRow] = ()
        self._texts: tuple[str, ...] | None = None
        self._made: dict[_MadeOf, str] = {}
        self._spans_for: tuple[str, ...] | None = None
        self._spans: dict[str, tuple[int, int] | None] = {}
        self._shown: dict[RowKey, str] = {}  # each row's command as cut, for the rows as they are
        self._shown_for: tuple[object, ...] = ()
        self._matched: re.Pattern[str] | None = None  # the pattern when rematched() was last asked

    def show_rows(self, rows: Sequence[ProcessRow]) -> None:
        """The table's rows now (each tick): their commands are read again when a cut needs them."""
        self._rows, self._texts, self._shown = rows, None, {}

    def rematched(self) -> bool:
        """Whether the filter's pattern changed since last asked: it marks other stretches of the commands
        (``row_line``), where the commands as cut may read the same."""
        rematched, self._matched = self.match is not self._matched, self.match
        return rematched

    def forget(self) -> None:
        """The columns changed: every row is cut again."""
        self._shown = {}

    def texts(self) -> tuple[str, ...]:
        """Every row's whole command, as its cell has it before the cut: the siblings the cut tells apart."""
        if self._texts is None:
            cell = COLUMN_BY_NAME["command"].cell
            known: dict[_MadeOf, str] = {}
            texts = []
            for row in self._rows:
                p = row.process
                made_of = (p.command, p.name, p.stale, p.visible, p.not_visible_reason, row.guide, row.folded)
                text = known.get(made_of) or self._made.get(made_of) or cell(row)
                known[made_of] = text
                texts.append(text)
            self._made, self._texts = known, tuple(texts)
        return self._texts

    def shown(self, row: ProcessRow, text: str, width: int) -> str:
        """``text`` (the row's command cell) as the column shows it in ``width`` cells: cut, or scrolled."""
        state = (width, self.start, self.match)
        if state != self._shown_for:  # another width, scroll or filter: every row cut again
            self._shown_for, self._shown = state, {}
        shown = self._shown.get(row.key)
        if shown is None:  # once: the line's signature and its drawing ask alike
            shown = self._shown[row.key] = self._fit(text, width)
        return shown

    def _fit(self, text: str, width: int) -> str:
        if self.start:
            return fit_command(text, width, start=self.start)
        if cells(text) <= width:
            return text
        keep: tuple[int, int] | None = None
        if self.match is not None and (found := self.match.search(text)) is not None and found.end() > found.start():
            keep = found.span()
        else:
            keep = self._sibling_span(text)
        return fit_command(text, width, keep)

    def _sibling_span(self, text: str) -> tuple[int, int] | None:
        every = self.texts()
        if every is not self._spans_for:
            if every != self._spans_for:  # the commands changed: their siblings again
                self._spans = dict(zip(every, sibling_spans(every), strict=True))
            self._spans_for = every
        return self._spans.get(text)

    def scroll(self, step: int, width: int) -> bool:
        """Scroll by ``step`` characters (no further than the longest command's end); whether it moved."""
        furthest = max((last_start(text, width) for text in self.texts()), default=0)
        start = max(0, min(furthest, min(self.start, furthest) + step))
        moved = start != self.start
        self.start = start
        return moved

    def home(self) -> bool:
        """Back to the start (each command cut in the middle again); whether it moved."""
        moved, self.start = self.start != 0, 0
        return moved

    def end(self, width: int) -> bool:
        """To the end of every command; whether it moved."""
        return self.scroll(TO_THE_END, width)
