"""A process table's lines, as plain logic: a line built of runs of one style, a cell fitted to its
column, which row the cursor goes to, and whether a row shows what it showed last tick but for its TIME."""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import compress, count
from operator import attrgetter, is_not

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from gputop.core.text_cut import cut_end
from gputop.ui.widgets.row_order import order_key
from gputop.ui.widgets.rows import COLUMN_BY_NAME, Column, ProcessRow, RowKey, SortOrder
from gputop.ui.widgets.styled_line import text_cells

TAG_MARK = "●"
HOST_COLUMNS = frozenset({"cpu", "host_memory", "time", "job", "container", "command"})
# What a launcher's row (in the tree) shows: it holds no GPU of its own.
LAUNCHER_COLUMNS = frozenset({"pid", "user", "gpu_memory", "container", "command"})
_KEY = attrgetter("key")


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


def replaced(given: list[ProcessRow], rows: list[ProcessRow]) -> list[int] | None:
    """Where ``rows`` hold another object than the rows ``given`` before, for the same process (key): ``[]`` when
    they are the same rows, object for object; None when they are not the same processes in the same places, or
    when more than one row in eight was made again (then looking at each costs more than it saves)."""
    if len(rows) != len(given):
        return None
    at = list(compress(count(), map(is_not, rows, given)))  # in C: a thousand rows at 8x128, every tick
    if len(at) > len(rows) // 8 or any(rows[place].key != given[place].key for place in at):
        return None
    return at


def fills_other(before: ProcessRow, now: ProcessRow) -> bool:
    """Whether a row made again fills JOB or CONTAINER where it did not, or the other way round."""
    old, new = before.process, now.process
    return (old.job is None) != (new.job is None) or bool(old.container) != bool(new.container)


def sorted_again(
    ordered: list[ProcessRow],
    changed: list[ProcessRow],
    order: SortOrder,
    values: Mapping[RowKey, float | str | None] | None = None,
) -> list[ProcessRow]:
    """``ordered`` (rows as ``sort_rows`` put them in ``order``) with the ``changed`` rows in the place of the rows of
    their keys, each where ``sort_rows`` would put it: the others keep their order, a few rows are placed, with no
    sort of them all (a thousand rows at 8x128, of which a few changed a tick). ``values``: each ordered row's value
    of the sort column, by key: a changed row whose value is the same takes the place of the row it replaces."""
    sort_key = COLUMN_BY_NAME[order.column].sort_key
    places = dict(zip(map(_KEY, ordered), count()))  # in C
    rows = list(ordered)
    moving: list[tuple[int, ProcessRow]] = []
    for row in changed:
        place = places[row.key]
        if values is not None and row.key in values and values[row.key] == sort_key(row):
            rows[place] = row  # its value, PID and GPU, all that places it, are as they were
        else:
            moving.append((place, row))
    for place in sorted((place for place, _ in moving), reverse=True):
        del rows[place]
    placed = order_key(order)
    for _, row in moving:
        insort(rows, row, key=placed)
    return rows


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
        self._cells = text_cells(text)

    def add(self, text: str, style: Style, cells: int | None = None) -> None:
        """Add ``text`` in ``style``; ``cells``: its width where the caller knows it (a fitted cell)."""
        if style is not self._style:
            self.segments.append(Segment("".join(self._texts), self._style))
            self._texts, self._style = [], style
        self._texts.append(text)
        self._cells += text_cells(text) if cells is None else cells

    def strip(self, width: int, style: Style) -> Strip:
        """The line, cropped or padded (in ``style``) to ``width`` cells."""
        self.segments.append(Segment("".join(self._texts), self._style))
        return Strip(self.segments, self._cells).crop_extend(0, width, style)


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
