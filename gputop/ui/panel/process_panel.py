"""The main screen's process panel: a process table that holds what it shows (sort, filter, tree, folds)
and has the keys that change it (``keymap.PANEL_BINDINGS``), besides those of every process table.

Its state lives on it: ``sort``, ``filter``, ``tree_view`` and ``folded`` are reactive, and setting any of
them shows the last snapshot's rows again. It opens the menus of its own state itself (the sort menu, one
GPU, one user); what is someone else's it asks for in a message that bubbles to the screen and the app: a
GPU's detail (``OpenGpuDetail``), the card marked for the GPU it shows alone (``GpuFiltered``), a signal
and a process in full (``ProcessTable``'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from textual.message import Message
from textual.reactive import var

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.forecast import ProcessGrowth
from gputop.core.host.ancestry import Ancestor, AncestryReader
from gputop.core.model import ProcessIdentity, Snapshot
from gputop.ui.keymap import PANEL_ACTIONS, PANEL_BINDINGS
from gputop.ui.panel.panel_words import no_such_gpu, panel_title
from gputop.ui.widgets.filter_bar import FilterBar
from gputop.ui.widgets.process_filter import FilterError, ProcessFilter
from gputop.ui.widgets.process_table import LIVE, ProcessTable
from gputop.ui.widgets.rows import ProcessRow, RowKey, SortOrder
from gputop.ui.widgets.snapshot_rows import SnapshotRows, process_count, users_with_processes
from gputop.ui.widgets.tree_rows import fold_rows, tree_rows

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.binding import BindingType


def _nothing_below(rows: list[ProcessRow], row: ProcessRow) -> bool:
    """Whether no tree line follows ``row`` drawn deeper than it."""
    after = rows.index(row) + 1
    return after >= len(rows) or len(rows[after].guide) <= len(row.guide)


class ProcessPanel(ProcessTable):
    """The process table of the main screen, in the order, filter and form the user chose."""

    BINDINGS: ClassVar[list[BindingType]] = PANEL_BINDINGS
    REPLAY_TAKES_ARROWS = False  # ← → scroll the commands in a replay too (, and . step it)

    filter: var[ProcessFilter] = var(ProcessFilter(), init=False)
    tree_view: var[bool] = var(False, init=False)  # workers under their launchers (t)
    folded: var[frozenset[RowKey]] = var(frozenset(), init=False)  # tree lines whose subtree is hidden (-)

    class GpuFiltered(Message):
        """The panel shows one GPU's processes alone (``index``), or every GPU's again (None)."""

        def __init__(self, index: int | None) -> None:
            super().__init__()
            self.index = index

    class OpenGpuDetail(Message):
        """g: GPU ``index`` in detail."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(
        self, id: str | None = None, *, ancestry: bool = False, allows: Callable[[str], bool] = LIVE
    ) -> None:
        """``ancestry``: the processes are this host's, live: the tree reads their ancestors from /proc.
        ``allows``: whether an action acts in this mode (read-only, a replay)."""
        super().__init__(id=id, allows=allows)
        self.ancestry = ancestry
        self._ancestry: AncestryReader | None = None
        self._snapshot: Snapshot | None = None
        self._growth: Mapping[ProcessIdentity, ProcessGrowth] | None = None
        self._diagnoses: Diagnoses | None = None
        self._title_words: tuple[object, ...] | None = None  # what the title says, to make it only when it changed
        self._snapshot_rows = SnapshotRows()  # the snapshots' rows, a row kept while unchanged
        # The filter box under the panel (the main screen composes it): what is typed there filters here.
        self.filter_bar = FilterBar(self.apply_filter_text, self._filter_done)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in PANEL_ACTIONS:
            return super().check_action(action, parameters)
        return self.allows(action)

    # -- what it shows ---------------------------------------------------------------

    def show(
        self,
        snapshot: Snapshot,
        growth: Mapping[ProcessIdentity, ProcessGrowth] | None,
        diagnoses: Diagnoses | None = None,
    ) -> None:
        """Show a snapshot's processes (with their memory growth and idleness) in the chosen order, filtered."""
        self._snapshot, self._growth, self._diagnoses = snapshot, growth, diagnoses
        self._show_rows()

    def _show_rows(self) -> None:
        """Show the last snapshot again (first, or the order, the filter, the tree or the tags changed)."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        process_filter, sort = self.filter, self.sort
        every = self._snapshot_rows.rows(snapshot, self._growth, self._diagnoses)
        rows = [row for row in every if process_filter.matches(row)] if process_filter.active else every
        self.empty_message = "no process matches the filter" if process_filter.active else "no GPU processes"
        self.command.match = process_filter.pattern  # what the filter matched stays in view in each command
        if self.tree_view:
            tree = tree_rows(rows, sort, self._ancestors(rows, every))
            if self.folded:
                # Lines gone are forgotten (without showing the rows again: they are being shown).
                self.set_reactive(ProcessPanel.folded, self.folded & {row.key for row in tree})
                tree = fold_rows(tree, set(self.folded))
            self.set_rows(tree, sort, in_order=True)
        else:
            self.set_rows(rows, sort)
        hidden_sort = None if sort.column in self.shown_columns else sort
        total = self._snapshot_rows.processes  # a "(no process)" row is not a process: the title counts processes
        shown = total if rows is every else process_count(rows)
        words = (shown, total, process_filter, len(self.tagged), self.tree_view, hidden_sort)
        if words != self._title_words:
            # Setting a border title repaints the whole panel: only when it changed.
            self._title_words = words
            self.border_title = panel_title(*words[:4], tree=self.tree_view, hidden_sort=hidden_sort)

    def _ancestors(self, rows: list[ProcessRow], every: list[ProcessRow]) -> dict[int, Ancestor]:
        """The processes above ``rows`` up to their sessions, when they are this host's (else none)."""
        if not self.ancestry:
            return {}
        if self._ancestry is None:
            self._ancestry = AncestryReader()
        parents = (row.process.parent_pid for row in rows if row.process.visible)
        return self._ancestry.read(parents, (row.process.pid for row in every))

    def watch_sort(self, order: SortOrder) -> None:
        self._show_rows()

    def watch_filter(self, before: ProcessFilter, process_filter: ProcessFilter) -> None:
        self._show_rows()
        if process_filter.gpu != before.gpu:
            self.post_message(self.GpuFiltered(process_filter.gpu))

    def watch_tree_view(self) -> None:
        self._show_rows()

    def watch_folded(self) -> None:
        self._show_rows()

    def tags_changed(self) -> None:
        self._show_rows()  # the title counts them

    # -- the sort menu ---------------------------------------------------------------

    def action_sort_menu(self) -> None:
        """F6: choose the column from a list, the columns not on screen too."""
        from gputop.ui.screens.sort_pick import pick_sort  # the menu is imported when first opened

        pick_sort(self)

    # -- the filter ------------------------------------------------------------------

    @property
    def filter_shown(self) -> bool:
        """Whether a filter is applied or its box open: Esc then has something to clear."""
        return self.filter.active or bool(self.filter_bar.display)

    def apply_filter_text(self, text: str) -> str | None:
        """Filter by ``text``; an invalid regex keeps the last good filter and its problem is returned."""
        try:
            self.filter = self.filter.with_text(text)
        except FilterError as problem:
            return str(problem)
        return None

    def action_filter(self) -> None:
        """/: the filter box, holding the filter's text."""
        self.filter_bar.open(self.filter.text)

    def _filter_done(self) -> None:
        """Enter in the filter box: back to the panel, first match selected."""
        self.select_first()
        self.screen.set_focus(self)

    def clear_filter(self) -> None:
        """Esc: leave the filter box and clear the filter (text, user and GPU)."""
        self.filter_bar.clear()
        self.filter = ProcessFilter()
        self.screen.set_focus(self)

    def only_owner(self, kind: str, name: str) -> None:
        """Only one owner's processes (from the owner screen): a user, or ``job:``, ``pod:``, ``container:``."""
        self.filter = ProcessFilter().with_user(name) if kind == "user" else ProcessFilter().with_text(f"{kind}:{name}")
        self.screen.set_focus(self)

    def action_next_match(self) -> None:
        """n / F3: the next process (after the cursor, wrapping) that the filter's text matches."""
        if not self.filter.text:
            self.notify("no filter: / types one, then n goes from match to match", severity="warning")
            return
        self.select_next(self.filter.matches)

    def action_only_gpu(self, index: int) -> None:
        """0-9: only that GPU's processes; a GPU this machine does not have is refused, in words."""
        snapshot = self._snapshot
        refusal = no_such_gpu(index, [gpu.index for gpu in snapshot.gpus] if snapshot else [])
        if refusal is not None:
            self.notify(refusal, severity="warning")
            return
        self.filter = self.filter.with_gpu(index)

    def action_all_gpus(self) -> None:
        self.filter = self.filter.with_gpu(None)

    def action_pick_gpu(self) -> None:
        """#: choose the GPU from a list (GPUs 10 and up too), or all of them."""
        from gputop.ui.screens.gpu_pick import GpuPickScreen

        snapshot = self._snapshot

        def picked(choice: str | None) -> None:
            if choice is not None:
                self.filter = self.filter.with_gpu(None if choice == GpuPickScreen.ALL else int(choice))

        self.app.push_screen(GpuPickScreen(snapshot.gpus if snapshot else (), self.filter.gpu), picked)

    def action_pick_user(self) -> None:
        """u: choose one user among those with GPU processes, or all of them."""
        from gputop.ui.screens.user_pick import UserPickScreen, user_usage

        snapshot = self._snapshot
        users = users_with_processes(snapshot) if snapshot else []

        def picked(user: str | None) -> None:
            if user is not None:
                self.filter = self.filter.with_user(None if user == UserPickScreen.ALL else user)

        self.app.push_screen(UserPickScreen(users, self.filter.user, user_usage(snapshot)), picked)

    # -- the tree --------------------------------------------------------------------

    def action_toggle_tree(self) -> None:
        self.tree_view = not self.tree_view

    def action_fold(self) -> None:
        """-: in the tree, hide the subtree under the selected line (htop's habit)."""
        self._fold(True)

    def action_unfold(self) -> None:
        """+: in the tree, show the folded subtree under the selected line again."""
        self._fold(False)

    def _fold(self, folded: bool) -> None:
        if not self.fold(self.cursor_key, folded) and not self.tree_view:
            self.notify("+ and - fold the tree: t shows it", severity="warning")

    def fold(self, key: RowKey | None, folded: bool) -> bool:
        """Fold (hide) or unfold the subtree under the tree line ``key``; False when there is nothing to do
        (not the tree, no line, nothing under it, or already so)."""
        if not self.tree_view or key is None:
            return False
        row = next((row for row in self.rows if row.key == key), None)
        if row is None or (folded and (key in self.folded or _nothing_below(self.rows, row))):
            return False
        if not folded and key not in self.folded:
            return False
        self.folded = self.folded | {key} if folded else self.folded - {key}
        return True

    # -- a GPU in detail -------------------------------------------------------------

    def action_detail_selected(self) -> None:
        """g: the detail screen of the GPU of the selected process; with none selected, of the GPU the
        panel shows alone, else of the first GPU."""
        row = self.cursor_row
        if row is not None:
            self.post_message(self.OpenGpuDetail(row.process.gpu_index))
            return
        snapshot = self._snapshot
        indices = [] if snapshot is None else [gpu.index for gpu in snapshot.gpus]
        focused = self.filter.gpu
        if focused is not None and focused in indices:
            self.post_message(self.OpenGpuDetail(focused))
        elif indices:
            self.post_message(self.OpenGpuDetail(indices[0]))
        else:
            self.notify("no GPU to show", severity="warning")
