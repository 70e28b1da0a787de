"""o: who holds the GPUs, by user, job, pod or container (``o`` again for the next grouping).

The rows come from ``core.analysis.owners`` (the same rollup as ``--once --by`` and ``--json``); this screen
only lays them out, keeps a cursor and a sort order, and hands the chosen owner back (Enter), for
the process panel to show that owner's processes.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from gputop.core.analysis.owners import OWNER_KINDS, OwnerRow, owner_rollup
from gputop.core.analysis.tick_feed import Tick
from gputop.core.output.owner_table import (
    fitted_columns,
    owner_cells,
    sort_owners,
)
from gputop.core.text_cut import fit_cells
from gputop.ui.screens.live import LiveScreen
from gputop.ui.screens.owner_list import OwnerListScreen

_HINTS = {
    "user": "no GPU processes",
    "job": "no GPU process is in a Slurm job",
    "pod": "no GPU process is in a Kubernetes pod",
    "container": "no GPU process is in a container",
}


class OwnerScreen(OwnerListScreen[OwnerRow], LiveScreen):
    """The owners of the GPU processes, one row each; Enter shows the chosen owner's processes."""

    HINTS = _HINTS

    BINDINGS = [
        Binding("escape,q", "back", "Back", key_display="Esc"),
        Binding("o", "next_kind", "By…", key_display="o", tooltip="Group by user, job, pod, container in turn"),
        Binding("enter", "choose", "Processes", key_display="Enter", tooltip="The process panel, filtered to them"),
        Binding("less_than_sign", "sort_move(-1)", "Sort column left", show=False),
        Binding("greater_than_sign", "sort_move(1)", "Sort", key_display="<>"),
        Binding("I", "sort_invert", "Invert sort order", show=False),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
    ]

    def __init__(
        self,
        tick: Tick | None,
        choose: Callable[[str, str], None],
        kind: str = "user",
    ) -> None:
        super().__init__(choose, kind, id="owners-screen")
        self.tick = tick  # the one shown when it opened (None: none yet); the app hands it the next ones

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="owners-body"):
            yield Static(id="owners-title")
            yield Static(id="owners-table")
        yield Footer()

    def on_mount(self) -> None:
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def show(self, tick: Tick) -> None:
        self.tick = tick
        self._draw()

    def _draw(self) -> None:
        tick = self.tick
        now = 0.0 if tick is None else tick.snapshot.timestamp
        rows = [] if tick is None else owner_rollup(tick.snapshot, self.kind, tick.foresight.diagnoses)
        self.rows = sort_owners(rows, self.sort_column, self.descending, now)
        cursor = self.cursor
        self._cursor_name = None if cursor is None else self.rows[cursor].name
        kinds = Text("Owners by ", style="bold")
        for kind in OWNER_KINDS:
            kinds.append(f" {kind} ", style="bold reverse" if kind == self.kind else "dim")
        kinds.append(f"   {len(self.rows)}", style="bold")
        self.query_one("#owners-title", Static).update(kinds)
        self.query_one("#owners-table", Static).update(self._table(now, cursor))

    def _table(self, now: float, cursor: int | None) -> Text:
        columns, name_width = fitted_columns(max(40, self.size.width - 1))
        widths = {column.name: column.width or name_width for column in columns}
        table = self.header(columns, widths)
        if not self.rows:
            table.append(f"\n  {self.HINTS[self.kind]}", style="dim italic")
        for index, row in enumerate(self.rows):
            cells = owner_cells(row, now)
            line = " ".join(fit_cells(cells[c.name], widths[c.name], c.right) for c in columns)
            table.append("\n")
            table.append(line, style="reverse" if index == cursor else "")
        return table

    def action_next_kind(self) -> None:
        self.kind = OWNER_KINDS[(OWNER_KINDS.index(self.kind) + 1) % len(OWNER_KINDS)]
        self._cursor_name = None
        self._draw()

    def action_sort_move(self, step: int) -> None:
        self.sort_among([c.name for c in fitted_columns(max(40, self.size.width - 1))[0]], step)
