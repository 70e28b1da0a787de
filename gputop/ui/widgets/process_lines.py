"""A process table drawn with the line API: the rows, their columns and their lines.

Rows are keyed by process identity. Each tick the cursor stays on the same
process, the selected row keeps its place on screen, rows that left vanish,
new ones appear, and only lines whose text changed are redrawn. The keys that act on a table's
processes are ``process_table.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, count, repeat
from operator import attrgetter, eq

from rich.segment import Segment
from rich.style import Style
from textual.events import Resize
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gputop.ui.widgets.card_frame import FramedLines
from gputop.ui.widgets.command_column import CommandColumn
from gputop.ui.widgets.row_line import DrawnRow, RowStyles, row_line
from gputop.ui.widgets.row_order import KeptOrder
from gputop.ui.widgets.rows import (
    LIVE_COLUMNS,
    Column,
    ProcessRow,
    RowKey,
    SortOrder,
    empty_columns,
    visible_columns,
)
from gputop.ui.widgets.table_line import (
    LAUNCHER_COLUMNS,
    header_strip,
    process_after,
    same_but_time,
)

_KEY = attrgetter("key")


class ProcessLines(FramedLines, ScrollView, can_focus=True):
    """GPU processes, one row per process and GPU: what is drawn, and where the cursor is. A changed line
    is set in the table's frame (``card_frame``: its border and the scrollbar's gutter as Textual drew them);
    a new border title refreshes the whole table (Textual's setter does), so the frame is taken again."""

    COMPONENT_CLASSES = {
        "process-table--header",
        "process-table--sorted",
        "process-table--cursor",
        "process-table--tagged",
        "process-table--hidden",
        "process-table--stale",
        "process-table--memory",
        "process-table--growing",
        "process-table--match",
    }

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._order = KeptOrder()  # the rows in their order, kept from tick to tick
        self.cursor_key: RowKey | None = None
        self.tagged: set[RowKey] = set()
        self.empty_message = "no GPU processes"
        # Last tick's rows drawn, with their cells: a row whose process and figures are as they were
        # keeps its cells, TIME alone made again (Dolphie's keyed updates, cell by cell).
        self._drawn: dict[RowKey, DrawnRow] = {}
        self._drawn_now: dict[RowKey, DrawnRow] = {}
        self._line_state: list[object] = []  # the visible lines' signatures, from _line_top down
        self._line_top = 0
        self.column_names: tuple[str, ...] | None = None  # None: every column that fits
        self._columns = visible_columns(120)
        self._empty: frozenset[str] = frozenset()  # columns with nothing to show, the sort column aside
        self._sorted_by = self.rows_order.column  # a column the user sorts by shows first where room is short
        self._widths_for: tuple[tuple[Column, ...], int] | None = None
        self._widths: list[int] = []
        self._header_drawn: tuple[tuple[Column, ...], SortOrder, int] | None = None
        self.command = CommandColumn()  # how the commands are cut, and scrolled (← →)
        self._frame_top: int | None = None  # the first row on screen, while a frame's lines are drawn

    # -- the rows and their order ----------------------------------------------------

    @property
    def rows(self) -> list[ProcessRow]:
        """The rows, top to bottom."""
        return self._order.rows

    @rows.setter
    def rows(self, rows: list[ProcessRow]) -> None:
        self._order.rows = rows

    @property
    def rows_order(self) -> SortOrder:
        """The order the rows are in, which the header shows."""
        return self._order.order

    @property
    def rows_in_order(self) -> bool:
        """Whether the rows are as they were given (a tree), not sorted here."""
        return self._order.in_order

    # -- the columns shown ------------------------------------------------------------

    @property
    def _columns(self) -> tuple[Column, ...]:
        return self._shown_columns

    @_columns.setter
    def _columns(self, columns: tuple[Column, ...]) -> None:
        # Where TIME, GROWTH, IDLE and COMMAND are is asked for every row a tick: found once, when the columns change.
        self._shown_columns = columns
        names = self._names = tuple(column.name for column in columns)  # asked each tick (the title)
        self._live_at = tuple(n for n, name in enumerate(names) if name in LIVE_COLUMNS)
        self._command_at = names.index("command") if "command" in names else None
        self._state_shown = "growth" in names or "idle" in names  # a growing or idle row's cells in their style

    # -- what tests and the app read -------------------------------------------------

    def keys(self) -> list[RowKey]:
        """The keys of the rows, top to bottom."""
        return [row.key for row in self.rows]

    def pids(self) -> list[int]:
        """The PIDs of the rows, top to bottom."""
        return [row.process.pid for row in self.rows]

    @property
    def cursor_row(self) -> ProcessRow | None:
        index = self.cursor_index
        return None if index is None else self.rows[index]

    @property
    def cursor_index(self) -> int | None:
        key = self.cursor_key
        if key is None:
            return None
        # In C: asked a few times a tick, and the cursor may be a thousand rows down.
        return next(compress(count(), map(eq, map(_KEY, self.rows), repeat(key))), None)

    def tagged_rows(self) -> list[ProcessRow]:
        return [row for row in self.rows if row.key in self.tagged]

    # -- updating --------------------------------------------------------------------

    def set_rows(self, rows: list[ProcessRow], sort: SortOrder, *, in_order: bool = False) -> None:
        """Show these rows sorted by ``sort`` (``in_order``: as given, already sorted, as a tree is);
        keeps the cursor on the same process."""
        old_index = self.cursor_index
        top = self.scroll_offset.y
        old_screen_line = None if old_index is None else old_index - top
        placed = self._order.place(rows, sort, in_order=in_order)
        ordered = self._order.rows
        columns_changed = False
        if placed is None:  # the rows taken whole: the columns with something to show, the tags
            empty = empty_columns(ordered) - {sort.column}
            columns_changed = empty != self._empty or sort.column != self._sorted_by
            if columns_changed:
                self._empty, self._sorted_by = empty, sort.column
                self._columns = self._visible(self.size.width or 120)
                self._line_state = []  # every line is drawn again with the new columns
            self.command.show_rows(ordered)
            if self.tagged:
                self.tagged.intersection_update(row.key for row in ordered)
        elif placed:  # a few rows made again, put in their places
            self.command.show_rows(ordered)
        # The rows drawn last tick; none when the columns changed just now (cells of other columns).
        self._drawn, self._drawn_now = ({} if columns_changed else self._drawn_now), {}
        # The same rows in the same order (none placed): the cursor is on the row it was on.
        new_index = old_index if placed == [] else self.cursor_index
        if new_index is None:
            index = 0 if old_index is None else min(old_index, len(ordered) - 1)
            self.cursor_key = process_after(ordered, index, 0)
            new_index = self.cursor_index
        width, height = self.size
        virtual_size = Size(width, len(ordered) + 1)
        if virtual_size != self.virtual_size:  # (setting it as it is costs Textual a reactive's round)
            self.virtual_size = virtual_size
        if new_index is not None and old_screen_line is not None:
            target = max(0, min(new_index - old_screen_line, len(ordered) + 1 - height))
            if target != top:
                self.scroll_to(y=target, animate=False, immediate=True)
                top = self.scroll_offset.y
        top = self._cursor_into_view(new_index, top, height)
        self._refresh_changed_lines(top, height)

    def select_first(self) -> None:
        self.cursor_key = process_after(self.rows, 0, 0)
        self.scroll_to(y=0, animate=False, immediate=True)
        self._refresh_changed_lines()

    def select_next(self, matches: Callable[[ProcessRow], bool]) -> None:
        """Move the cursor to the next row (wrapping) that ``matches``; launchers never match."""
        start = self.cursor_index
        count = len(self.rows)
        for step in range(1, count + 1):
            row = self.rows[((-1 if start is None else start) + step) % count]
            if not row.launcher and matches(row):
                self.cursor_key = row.key
                self._ensure_cursor_visible()
                self._refresh_changed_lines()
                return

    def _row_cells(self, row: ProcessRow) -> tuple[str, ...]:
        key = row.key
        drawn = self._drawn_now.get(key)  # filled for the rows drawn: at 8x128 most rows are never on screen
        if drawn is not None:
            return drawn.cells
        before = self._drawn.get(key)
        if before is not None and (before.row is row or same_but_time(before.row, row)):
            cells = before.cells
            if not row.launcher:  # a launcher shows none of them
                columns = self._columns
                for at in self._live_at:  # TIME, GROWTH, IDLE: they move while the row is kept
                    cell = columns[at].cell(row)
                    if cell != cells[at]:
                        cells = (*cells[:at], cell, *cells[at + 1 :])
            before.row, before.cells = row, cells  # its line kept with what it was made of
            self._drawn_now[key] = before
            return cells
        cells = tuple(
            column.cell(row) if not row.launcher or column.name in LAUNCHER_COLUMNS else "" for column in self._columns
        )
        self._drawn_now[key] = DrawnRow(row, cells)
        return cells

    def _visible_state(self, width: int, top: int, height: int) -> list[object]:
        """Each visible line's signature, the panel ``width`` wide inside its scrollbar and ``height`` high, from
        row ``top`` down."""
        command_width = self._command_width(width)
        cursor, tagged, command_at = self.cursor_key, self.tagged, self._command_at
        row_cells, command_shown = self._row_cells, self.command.shown
        state: list[object] = []
        add = state.append
        for row in self.rows[top : top + max(0, height - 1)]:  # each visible line, every tick
            cells = row_cells(row)
            # The command as cut: it changes with its siblings, the filter and the scroll, its cell does not.
            command = None if command_at is None else command_shown(row, cells[command_at], command_width)
            key, process = row.key, row.process
            add((cells, command, key == cursor, key in tagged, process.visible, process.stale))
        return state

    def _refresh_changed_lines(self, top: int | None = None, height: int | None = None) -> None:
        """Refresh the lines whose signature changed (``top``, ``height``: the scroll and the panel's height
        where the caller has them now)."""
        width = self.scrollable_size.width  # asked once a tick: Textual works it out anew each time
        top = self.scroll_offset.y if top is None else top
        new_state = self._visible_state(width, top, self.size.height if height is None else height)
        old_state, old_top = self._line_state, self._line_top
        self._line_state, self._line_top = new_state, top
        header = (self._columns, self.rows_order, width)
        widened = self._header_drawn is not None and self._header_drawn[2] != width  # a scrollbar came or went
        changed: list[Region] = []
        if header != self._header_drawn:  # the header line changes with the columns and the sort only
            self._header_drawn = header
            changed.append(Region(0, 0, width, 1))
        if self.command.rematched() or not new_state or not old_state or old_top != top or widened:
            self.refresh()
            return
        # Lines that changed side by side are one region: Textual and the frame take each region apart.
        first: int | None = None
        lines = max(len(old_state), len(new_state))
        for line in range(lines + 1):
            same = line == lines or (
                (old_state[line] if line < len(old_state) else None)
                == (new_state[line] if line < len(new_state) else None)
            )
            if not same and first is None:
                first = line
            elif same and first is not None:
                changed.append(Region(0, 1 + first, width, line - first))
                first = None
        if changed:  # one refresh for them all: each call works out the widget's offset and clears its caches
            self.refresh(*changed)

    def _draw_whole(self) -> None:
        """Every line drawn again, the visible lines' signatures taken as they are now."""
        top = self.scroll_offset.y
        self._line_state, self._line_top = self._visible_state(self.scrollable_size.width, top, self.size.height), top
        self.refresh()

    @property
    def shown_columns(self) -> tuple[str, ...]:
        """The names of the columns on screen, left to right."""
        return self._names

    def show_columns(self, names: tuple[str, ...] | None) -> None:
        """Limit the columns to ``names`` (None: every column that fits)."""
        self.column_names = names
        self._columns = self._visible(self.size.width or 120)
        self._forget_cells()
        self._draw_whole()

    def _visible(self, width: int) -> tuple[Column, ...]:
        """The columns at ``width``: the user's, those with something to show, the sort column first."""
        return visible_columns(width, self.column_names, self._empty, first=self._sorted_by)

    def _forget_cells(self) -> None:
        """The columns changed: every row's cells are made again."""
        self._drawn, self._drawn_now = {}, {}
        self.command.forget()

    def on_resize(self, event: Resize) -> None:
        self._columns = self._visible(event.size.width)
        self._forget_cells()
        self.virtual_size = Size(self.size.width, len(self.rows) + 1)
        self._draw_whole()

    def _command_width(self, width: int | None = None) -> int:
        """The COMMAND column's width in a panel ``width`` cells wide inside its scrollbar (None: as it is now)."""
        at = self._command_at
        if at is None:
            return 0
        return self._column_widths(self.scrollable_size.width if width is None else width)[at]

    def _ensure_cursor_visible(self) -> None:
        self._cursor_into_view(self.cursor_index, self.scroll_offset.y, self.size.height)

    def _cursor_into_view(self, index: int | None, top: int, height: int) -> int:
        """Scroll so that row ``index`` (the cursor's) is on screen, the panel ``height`` lines high and scrolled
        to ``top`` now; the first row on screen then."""
        if index is None:
            return top
        page = max(1, height - 1)
        if index < top:
            self.scroll_to(y=index, animate=False, immediate=True)
        elif index >= top + page:
            self.scroll_to(y=index - page + 1, animate=False, immediate=True)
        else:
            return top
        return self.scroll_offset.y

    def _column_widths(self, width: int) -> list[int]:
        """Each column's width in a panel ``width`` cells wide: the fixed ones, and the rest for the one without."""
        key = (self._columns, width)
        if key != self._widths_for:  # the same for every line of a frame, and nearly every frame
            fixed = sum(column.width + 1 for column in self._columns if column.width) + 1
            self._widths_for = key
            self._widths = [column.width or max(0, width - fixed) for column in self._columns]
        return self._widths

    def _column_at(self, x: int) -> Column | None:
        left = 1
        for column, width in zip(self._columns, self._column_widths(self.scrollable_size.width), strict=True):
            if left <= x < left + width + 1:
                return column
            left += width + 1
        return None

    # -- drawing ---------------------------------------------------------------------

    def line_width(self) -> int:
        return self.scrollable_size.width

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_top = self.scroll_offset.y  # the same for every line of a frame: asked of Textual once
        try:
            return self.framed_lines(crop, super().render_lines)
        finally:
            self._frame_top = None

    def render_line(self, y: int) -> Strip:
        # Within the scrollbar, not under it: a line as wide as the panel lost its last cell to it.
        width = self.frame_width
        base = self.line_style
        if y == 0:
            return self._header_strip(width, base)
        top = self._frame_top
        index = y - 1 + (self.scroll_offset.y if top is None else top)
        if index >= len(self.rows):
            if not self.rows and y == 1:
                message = Segment(f"  {self.empty_message}", base + Style(dim=True, italic=True))
                return Strip([message]).crop_extend(0, width, base)
            return Strip.blank(width, base)
        return self._row_strip(self.rows[index], width, base)

    def _header_strip(self, width: int, base: Style) -> Strip:
        style = base + self.component_style("process-table--header")
        sorted_style = style + self.component_style("process-table--sorted")
        return header_strip(self._columns, self._column_widths(width), self.rows_order, style, sorted_style, width)

    def _row_strip(self, row: ProcessRow, width: int, base: Style) -> Strip:
        key, cells = row.key, self._row_cells(row)
        drawn, widths, at = self._drawn_now[key], self._column_widths(width), self._command_at
        command = None if at is None else self.command.shown(row, cells[at], widths[at])
        tagged, cursor = key in self.tagged, key == self.cursor_key
        # What the line is drawn from but its live cells: the cells it was made with (the same object while only
        # the live ones moved), the command as cut, its marks and styles, the columns' widths.
        state = (row.growing, row.idle) if self._state_shown else None
        match = self.command.match
        made_of = (drawn.made_with, command, tagged, cursor, state, widths, width, self._styles_kept, match)
        kept = drawn.line
        if kept is not None and kept.made_of == made_of:
            return kept.again(cells)
        styles = RowStyles.of(row, base, self.component_style, tagged=tagged, cursor=cursor)
        strip, drawn.line = row_line(row, cells, self._columns, widths, width, command=command, tagged=tagged,
                                     styles=styles, live_at=self._live_at, made_of=made_of, match=match)
        return strip
