"""What the two owner screens (one machine's, ``screens/owners.py``, and a fleet's,
``cluster/owner_screen.py``) do alike: a cursor that follows its owner, sorting, and Enter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Generic

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static

from gputop.core.output.owner_table import OWNER_TITLES, OwnerColumn, Row
from gputop.core.text_cut import fit_cells


class OwnerListScreen(Screen[None], Generic[Row]):
    """A table of owners, one row each; ``choose(kind, name)`` is called with the one Enter picks."""

    HINTS: ClassVar[dict[str, str]]  # by kind: what to say when there is no owner of that kind

    def __init__(self, choose: Callable[[str, str], None], kind: str, id: str) -> None:
        super().__init__(id=id)
        self.kind = kind
        self.sort_column = "gpu_memory"
        self.descending = True
        self.rows: Sequence[Row] = []
        self._choose = choose
        self._cursor_name: str | None = None

    def _draw(self) -> None:
        raise NotImplementedError

    @property
    def cursor(self) -> int | None:
        """The row the cursor is on (it follows its owner from one reading to the next)."""
        names = [row.name for row in self.rows]
        if not names:
            return None
        return names.index(self._cursor_name) if self._cursor_name in names else 0

    def header(self, columns: Sequence[OwnerColumn], widths: dict[str, int]) -> Text:
        """The table's title line: the kind's name for the owner column, an arrow on the sorted one."""
        arrow = "▼" if self.descending else "▲"
        titles = [
            fit_cells((OWNER_TITLES[self.kind] if column.name == "name" else column.title)
                + (arrow if column.name == self.sort_column else ""), widths[column.name], column.right)
            for column in columns
        ]
        return Text(" ".join(titles), style="bold")

    def lines(self) -> list[str]:
        """The table as shown, one string per line (for tests)."""
        return [line.rstrip() for line in str(self.query_one("#owners-table", Static).content).splitlines()]

    def sort_among(self, names: Sequence[str], step: int) -> None:
        """Sort by the column ``step`` away among ``names`` (the columns shown); names A-Z, figures largest first."""
        name = names[(names.index(self.sort_column) + step) % len(names)] if self.sort_column in names else names[0]
        self.sort_column, self.descending = name, name != "name"
        self._draw()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_cursor(self, step: int) -> None:
        cursor = self.cursor
        if cursor is None:
            return
        self._cursor_name = self.rows[max(0, min(len(self.rows) - 1, cursor + step))].name
        self._draw()

    def action_sort_invert(self) -> None:
        self.descending = not self.descending
        self._draw()

    def action_choose(self) -> None:
        cursor = self.cursor
        if cursor is None:
            self.notify(self.HINTS[self.kind], severity="warning")
            return
        name = self.rows[cursor].name
        self.dismiss(None)
        self._choose(self.kind, name)
