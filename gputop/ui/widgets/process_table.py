"""A process table with its keys: the cursor, the commands scrolled sideways, sort, tag, kill and open
(``keymap.TABLE_BINDINGS``). The main panel's table (``panel/process_panel.py``) and the detail screen's
are each one.

The sort order is the table's own (``sort``, set by its keys and a header click; the rows follow it). What
the table cannot do itself it asks for in a message that bubbles to the screen and the app: the sort menu
(``SortMenuAsked``), a signal (``KillAsked``), a process in full (``OpenProcess``); and it says when the
user chose an order (``Sorted``), which the main panel's other tables follow.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding
from textual.events import Click
from textual.message import Message
from textual.reactive import var

from gputop.ui.keymap import TABLE_ACTIONS, TABLE_BINDINGS, mode_allows
from gputop.ui.widgets.command_column import SCROLL_STEP
from gputop.ui.widgets.process_lines import ProcessLines
from gputop.ui.widgets.rows import RowKey, SortOrder, sort_for_key
from gputop.ui.widgets.table_line import process_after

if TYPE_CHECKING:
    from textual.binding import BindingType

# Which actions act where no mode was given: those of a live run.
LIVE = partial(mode_allows, readonly=False, replaying=False)


class ProcessTable(ProcessLines):
    """GPU processes, one row per process and GPU, and the keys that act on them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor(-1000000)", "First", show=False),
        Binding("end", "cursor(1000000)", "Last", show=False),
        *TABLE_BINDINGS,
    ]

    # In a replay ← → step it (as , and . do) where this table is: they scroll the commands live alone.
    REPLAY_TAKES_ARROWS: ClassVar[bool] = True

    # The order the user chose: the rows follow it as it changes.
    sort: var[SortOrder] = var(SortOrder(), init=False)

    class _TableMessage(Message):
        def __init__(self, table: ProcessTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> ProcessTable:
            return self.table

    class Sorted(_TableMessage):
        """The user chose the table's sort order (a key, a click, the menu)."""

        def __init__(self, table: ProcessTable, order: SortOrder) -> None:
            super().__init__(table)
            self.order = order

    class SortMenuAsked(_TableMessage):
        """F6: choose the sort column from a list (the columns not on screen too)."""

    class KillAsked(_TableMessage):
        """k: signal the tagged processes, or else the selected one (or say why not, in this mode)."""

    class OpenProcess(_TableMessage):
        """Enter: the selected process in full."""

    def __init__(self, id: str | None = None, *, allows: Callable[[str], bool] = LIVE) -> None:
        """``allows``: whether an action acts in this mode (read-only, a replay); a live run's by default."""
        super().__init__(id=id)
        self.allows = allows

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "command_scroll" and self.REPLAY_TAKES_ARROWS and self.allows("replay_step"):
            return False  # the key goes on to the replay's step
        return self.allows(action) if action in TABLE_ACTIONS else True

    # -- the sort order --------------------------------------------------------------

    def watch_sort(self, order: SortOrder) -> None:
        if not self.rows_in_order:
            self.set_rows(list(self.rows), order)

    def choose_sort(self, order: SortOrder) -> None:
        """The user chose ``order``: the rows follow it, and the screens are told."""
        self.sort = order
        self.post_message(self.Sorted(self, order))

    def action_sort_move(self, step: int) -> None:
        """< and >: the column left or right of the current one, among those on screen."""
        self.choose_sort(self.sort.moved(step, self.shown_columns))

    def action_sort_invert(self) -> None:
        self.choose_sort(self.sort.inverted())

    def action_sort_by(self, column: str) -> None:
        """M, P, T, N, G, D: that column, largest first (PIDs ascending)."""
        self.choose_sort(sort_for_key(column))

    def action_sort_menu(self) -> None:
        self.post_message(self.SortMenuAsked(self))

    # -- tags, signals, a process in full --------------------------------------------

    def action_tag(self) -> None:
        """Space: tag or untag the row under the cursor, then move down (htop's space); a ``(no process)``
        row is not a process and is never tagged, nor a launcher (its workers are the GPU processes)."""
        key = self.cursor_key
        row = self.cursor_row
        if key is None or row is None:
            return
        if not row.unattributed and not row.launcher:
            self.tagged ^= {key}
        self.action_cursor(1)
        self._refresh_changed_lines()
        self.tags_changed()

    def action_untag_all(self) -> None:
        self.set_tags(set())

    def set_tags(self, keys: set[RowKey]) -> None:
        """Tag exactly these rows (the others untagged), their marks and the title's count redrawn now."""
        self.tagged = keys
        self._refresh_changed_lines()
        self.tags_changed()

    def tags_changed(self) -> None:
        """The tags changed (the main panel's title counts them)."""

    def action_kill(self) -> None:
        self.post_message(self.KillAsked(self))

    def action_kill_refused(self) -> None:
        self.post_message(self.KillAsked(self))

    def action_open_process(self) -> None:
        self.post_message(self.OpenProcess(self))

    # -- moving ----------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        """Move ``step`` rows (Up, Down, the pages, Home, End) onto a process: a ``(no process)`` row
        is passed over (its GPU's detail, ``g`` or a click on the row or the card, says where that memory went)."""
        key = process_after(self.rows, self.cursor_index, step)
        if key is None:
            return
        self.cursor_key = key
        self._ensure_cursor_visible()
        self._refresh_changed_lines()
        # On a screen that scrolls (a GPU's detail on a short terminal), the table comes into view.
        self.scroll_visible(animate=False, immediate=True)

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_command_scroll(self, direction: int) -> None:
        """← →: the COMMAND column scrolled sideways, every row together."""
        width = self._command_width()
        if width and self.command.scroll(direction * SCROLL_STEP, width):
            self._refresh_changed_lines()

    def action_command_home(self) -> None:
        """Ctrl+A: each command from its start again (cut in the middle where it is long)."""
        if self.command.home():
            self._refresh_changed_lines()

    def action_command_end(self) -> None:
        """Ctrl+E: the end of every command."""
        width = self._command_width()
        if width and self.command.end(width):
            self._refresh_changed_lines()

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x)
            if column is not None:
                self.choose_sort(self.sort.by(column.name))  # sort by it; on the current column, the other direction
            return
        index = offset.y - 1 + self.scroll_offset.y
        if 0 <= index < len(self.rows):
            self.cursor_key = self.rows[index].key
            self._refresh_changed_lines()
