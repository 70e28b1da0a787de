"""Sort and filter of the process panel: the order and filter the user chose, applied to each snapshot."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.forecast import ProcessGrowth
from gputop.core.host.ancestry import Ancestor, AncestryReader
from gputop.core.model import ProcessIdentity, Snapshot
from gputop.ui.widgets.process_filter import FilterError, ProcessFilter
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.rows import COLUMN_BY_NAME, ProcessRow, RowKey, SortOrder, process_count, snapshot_rows
from gputop.ui.widgets.tree_rows import fold_rows, tree_rows


def _nothing_below(rows: list[ProcessRow], row: ProcessRow) -> bool:
    """Whether no tree line follows ``row`` drawn deeper than it."""
    after = rows.index(row) + 1
    return after >= len(rows) or len(rows[after].guide) <= len(row.guide)


def sort_for_key(column: str) -> SortOrder:
    """The order a sort key (``M``, ``P``, ``T``, ``N``, ``G``, ``D``) picks: largest first, but PIDs ascending."""
    return SortOrder("pid", False) if column == "pid" else SortOrder(column, True)


def panel_title(
    shown: int,
    total: int,
    process_filter: ProcessFilter,
    tagged: int,
    *,
    tree: bool = False,
    hidden_sort: SortOrder | None = None,
) -> Text:
    """The panel's border title: how many processes are shown (of how many), the tree, the sort
    when its column is not on screen, the filter, the tags."""
    title = Text.assemble(("Processes", "bold"), f" {shown}")
    if tree:
        title.append("  tree", style="bold cyan")
    if hidden_sort is not None:
        arrow = "▼" if hidden_sort.descending else "▲"
        title.append(f"  sort: {COLUMN_BY_NAME[hidden_sort.column].title}{arrow}", style="bold")
    if process_filter.active:
        title.append(f" of {total}")
        title.append(f"  filter: {process_filter.describe()}", style="bold yellow")
    if tagged:
        title.append(f"  tagged: {tagged}", style="bold")
    return title


class ProcessView:
    """Owns the panel's sort order and filter and puts the rows they give into the table."""

    def __init__(self, table: ProcessTable, ancestry: bool = False) -> None:
        """``ancestry``: the processes are this host's, live: the tree reads their ancestors from /proc."""
        self.table = table
        self._ancestry: AncestryReader | None = None
        self.ancestry = ancestry
        self.sort = SortOrder()
        self.filter = ProcessFilter()
        self._snapshot: Snapshot | None = None
        self._growth: Mapping[ProcessIdentity, ProcessGrowth] | None = None
        self._diagnoses: Diagnoses | None = None
        self._title: Text | None = None
        self.tree = False
        self.folded: set[RowKey] = set()  # tree lines whose subtree is hidden (- folds, + unfolds)

    def show(
        self,
        snapshot: Snapshot,
        growth: Mapping[ProcessIdentity, ProcessGrowth] | None,
        diagnoses: Diagnoses | None = None,
    ) -> None:
        """Show a snapshot's processes (with their memory growth and idleness) in the chosen order, filtered."""
        self._snapshot, self._growth, self._diagnoses = snapshot, growth, diagnoses
        self.refresh()

    def refresh(self) -> None:
        """Show the last snapshot again (the order, the filter or the tags changed)."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        table = self.table
        every = snapshot_rows(snapshot, self._growth, self._diagnoses)
        rows = [row for row in every if self.filter.matches(row)] if self.filter.active else every
        table.empty_message = "no process matches the filter" if self.filter.active else "no GPU processes"
        table.command.match = self.filter.pattern  # what the filter matched stays in view in each command
        if self.tree:
            tree = tree_rows(rows, self.sort, self._ancestors(rows, every))
            if self.folded:
                self.folded.intersection_update(row.key for row in tree)  # lines gone: forgotten
                tree = fold_rows(tree, self.folded)
            table.set_rows(tree, self.sort, in_order=True)
        else:
            table.set_rows(rows, self.sort)
        hidden_sort = None if self.sort.column in table.shown_columns else self.sort
        # A "(no process)" row is not a process: the title counts processes.
        total = process_count(every)
        shown = total if rows is every else process_count(rows)
        title = panel_title(shown, total, self.filter, len(table.tagged), tree=self.tree, hidden_sort=hidden_sort)
        if title != self._title:
            # Setting a border title repaints the whole panel: only when it changed.
            self._title = title
            table.border_title = title

    def _ancestors(self, rows: list[ProcessRow], every: list[ProcessRow]) -> dict[int, Ancestor]:
        """The processes above ``rows`` up to their sessions, when they are this host's (else none)."""
        if not self.ancestry:
            return {}
        if self._ancestry is None:
            self._ancestry = AncestryReader()
        parents = (row.process.parent_pid for row in rows if row.process.visible)
        return self._ancestry.read(parents, (row.process.pid for row in every))

    def set_sort(self, order: SortOrder) -> None:
        self.sort = order
        self.refresh()

    def set_tree(self, tree: bool) -> None:
        """Show the processes as a tree (workers under their launcher) or as a flat list."""
        self.tree = tree
        self.refresh()

    def fold(self, key: RowKey | None, folded: bool) -> bool:
        """Fold (hide) or unfold the subtree under the tree line ``key``; False when there is nothing to do
        (not the tree, no line, nothing under it, or already so)."""
        if not self.tree or key is None:
            return False
        row = next((row for row in self.table.rows if row.key == key), None)
        if row is None or (folded and (key in self.folded or _nothing_below(self.table.rows, row))):
            return False
        if not folded and key not in self.folded:
            return False
        if folded:
            self.folded.add(key)
        else:
            self.folded.discard(key)
        self.refresh()
        return True

    def set_filter(self, process_filter: ProcessFilter) -> None:
        self.filter = process_filter
        self.refresh()

    def apply_filter_text(self, text: str) -> str | None:
        """Filter by ``text``; an invalid regex keeps the last good filter and its problem is returned."""
        try:
            process_filter = self.filter.with_text(text)
        except FilterError as problem:
            return str(problem)
        if process_filter != self.filter:
            self.set_filter(process_filter)
        return None
