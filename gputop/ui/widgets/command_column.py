"""A process table's COMMAND column: how each row's command is cut to the column, and where it is scrolled.

A command too long for its column is cut in the middle (``core/output/command_text.fit_command``), keeping in
view what a filter matched in it, else what tells it from its siblings (the ranks of one job, the trials of one
sweep: ``--local-rank 2``). ← and → scroll the column sideways (every row together, as in nvitop and htop),
Ctrl+A and Ctrl+E go to either end.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from gputop.core.output.command_text import fit_command, sibling_spans
from gputop.core.text_cut import cells, last_start

# How far one ← or → scrolls, in characters.
SCROLL_STEP = 8
# Ctrl+E: every row scrolled to its end (each stops where its end shows).
TO_THE_END = 1 << 30


class CommandColumn:
    """The column's scroll position and what each row keeps in view; the table gives it the rows' texts."""

    def __init__(self) -> None:
        self.start = 0  # 0: each command cut in the middle; more: every command from that character on
        self.match: re.Pattern[str] | None = None
        self._spans_for: tuple[str, ...] | None = None
        self._spans: dict[str, tuple[int, int] | None] = {}

    def fit(self, text: str, width: int, texts: Callable[[], Sequence[str]]) -> str:
        """``text`` (one row's command) in ``width`` cells; ``texts`` gives every row's (its siblings)."""
        if self.start:
            return fit_command(text, width, start=self.start)
        if cells(text) <= width:
            return text
        keep: tuple[int, int] | None = None
        if self.match is not None and (found := self.match.search(text)) is not None and found.end() > found.start():
            keep = found.span()
        else:
            keep = self._sibling_span(text, texts)
        return fit_command(text, width, keep)

    def _sibling_span(self, text: str, texts: Callable[[], Sequence[str]]) -> tuple[int, int] | None:
        every = tuple(texts())
        if every is not self._spans_for:
            if every != self._spans_for:  # the commands changed: their siblings again
                self._spans = dict(zip(every, sibling_spans(every), strict=True))
            self._spans_for = every
        return self._spans.get(text)

    def scroll(self, step: int, texts: Sequence[str], width: int) -> bool:
        """Scroll by ``step`` characters (no further than the longest command's end); whether it moved."""
        furthest = max((last_start(text, width) for text in texts), default=0)
        start = max(0, min(furthest, min(self.start, furthest) + step))
        moved = start != self.start
        self.start = start
        return moved

    def home(self) -> bool:
        """Back to the start (each command cut in the middle again); whether it moved."""
        moved, self.start = self.start != 0, 0
        return moved

    def end(self, texts: Sequence[str], width: int) -> bool:
        """To the end of every command; whether it moved."""
        return self.scroll(TO_THE_END, texts, width)
