"""The order of the process rows: ``sort_rows`` sorts them all, ``order_key`` places a few among rows sorted,
``sorted_again`` places a few rows made again, and ``KeptOrder`` keeps a table's order from tick to tick."""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable, Mapping
from itertools import compress, count
from operator import is_not

from gputop.ui.widgets.rows import COLUMN_BY_NAME, LIVE_COLUMNS, ProcessRow, RowKey, SortOrder, gpu_order


def sort_rows(
    rows: Iterable[ProcessRow], order: SortOrder, values: Mapping[RowKey, float | str | None] | None = None
) -> list[ProcessRow]:
    """Rows in ``order``; missing values last; ties broken by PID, then GPU, so the order is stable.
    ``values``: each row's value of the sort column by key, where the caller has them already."""
    by_pid = sorted(rows, key=lambda r: (r.process.pid, gpu_order(r)))
    if values is None:
        key = COLUMN_BY_NAME[order.column].sort_key
        valued = [(key(r), r) for r in by_pid]  # each row's value once: a thousand rows are sorted each tick
    else:
        valued = [(values[r.key], r) for r in by_pid]
    present = [pair for pair in valued if pair[0] is not None]
    present.sort(key=_value, reverse=order.descending)  # stable: ties keep the PID order
    return [row for _, row in present] + [row for value, row in valued if value is None]


class _Descending:
    """A sort value that compares the other way round: a descending order is ascending in it."""

    __slots__ = ("value",)

    def __init__(self, value: float | str) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and self.value == other.value

    def __lt__(self, other: _Descending) -> bool:
        return other.value < self.value  # type: ignore[operator]  # a column's values are of one kind


def order_key(order: SortOrder) -> Callable[[ProcessRow], tuple[object, ...]]:
    """``sort_rows``' order as one key of a row: values present first, by value, then PID, then GPU (to
    place a few rows among rows already sorted, with ``bisect``)."""
    sort_key = COLUMN_BY_NAME[order.column].sort_key
    descending = order.descending

    def placed(row: ProcessRow) -> tuple[object, ...]:
        value = sort_key(row)
        if value is None:
            return (1, 0, row.process.pid, gpu_order(row))
        if descending:  # a number the other way round is its negative (compared in C); a text is wrapped
            return (0, _Descending(value) if isinstance(value, str) else -value, row.process.pid, gpu_order(row))
        return (0, value, row.process.pid, gpu_order(row))

    return placed


def _value(pair: tuple[float | str | None, ProcessRow]) -> float | str:
    return pair[0]  # type: ignore[return-value]  # the present ones only


def sorted_again(
    ordered: list[ProcessRow],
    replacing: Mapping[int, ProcessRow],
    order: SortOrder,
    values: Mapping[RowKey, float | str | None] | None = None,
) -> list[ProcessRow]:
    """``ordered`` (rows as ``sort_rows`` put them in ``order``) with a few rows made again: ``replacing`` gives, by
    the ``id`` of a row in ``ordered``, the row made again for its process, each put where ``sort_rows`` would put
    it: the others keep their order, with no sort of them all (a thousand rows at 8x128, a few made again a tick).
    ``values``: each ordered row's value of the sort column, by key: a row made again whose value is the same
    takes the place of the row it replaces."""
    sort_key = COLUMN_BY_NAME[order.column].sort_key
    rows = list(ordered)
    moved: list[int] = []
    # The places of the rows replaced, found by identity in C (a thousand rows: no key hashed, no loop in Python).
    for place in compress(count(), map(replacing.__contains__, map(id, ordered))):
        row = replacing[id(ordered[place])]
        if values is not None and values.get(row.key, _ABSENT) == sort_key(row):
            rows[place] = row  # its value, PID and GPU, all that places it, are as they were
        else:
            moved.append(place)
    # A row whose value moved but not past a neighbour's keeps its place too. The rows are sorted throughout, by
    # the values of the rows they hold (a row not yet placed by its old value): a row removed leaves them sorted.
    placed = order_key(order)
    gone: list[int] = []
    last = len(rows) - 1
    for place in moved:
        row = replacing[id(ordered[place])]
        key = placed(row)
        if (place == 0 or not key < placed(rows[place - 1])) and (place == last or not placed(rows[place + 1]) < key):
            rows[place] = row
        else:
            gone.append(place)
    for place in reversed(gone):
        del rows[place]
    for place in gone:
        insort(rows, replacing[id(ordered[place])], key=placed)
    return rows


_ABSENT = object()


def fills_other(before: ProcessRow, now: ProcessRow) -> bool:
    """Whether a row made again fills JOB or CONTAINER where it did not, or the other way round."""
    old, new = before.process, now.process
    return (old.job is None) != (new.job is None) or bool(old.container) != bool(new.container)


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


class KeptOrder:
    """A process table's rows in its sort order, tick after tick. Rows given again, every one, changed but for
    their clock (``SnapshotRows`` keeps them) keep their order; a few rows made again for the same processes are
    placed (``sorted_again``); else the rows are sorted, unless no sort value changed (the order is kept, by key).
    """

    def __init__(self) -> None:
        self.rows: list[ProcessRow] = []  # in ``order``
        self.order = SortOrder()  # the order the rows are in, which the header shows
        self.in_order = False  # the rows are as they were given (a tree)
        self.values: dict[RowKey, float | str | None] = {}  # each row's value of the sort column
        self._given: list[ProcessRow] = []  # the rows last given

    def place(self, rows: list[ProcessRow], order: SortOrder, *, in_order: bool = False) -> list[ProcessRow] | None:
        """``rows`` in ``order`` (``in_order``: as given, already sorted, as a tree is), in ``self.rows``. Returns
        the rows made again and placed one by one (``[]``: the rows of the last call, every one), or None where
        the rows were taken whole (other processes perhaps, or JOB or CONTAINER filled otherwise)."""
        given, self._given = self._given, rows
        sort_key = COLUMN_BY_NAME[order.column].sort_key
        # A kept row changed but its clock, growth and idleness (``SnapshotRows``), which those columns read.
        unmoved = not in_order and not self.in_order and order == self.order and order.column not in LIVE_COLUMNS
        at = replaced(given, rows) if unmoved else None
        if at is not None and not any(fills_other(given[n], rows[n]) for n in at):
            changed = [rows[n] for n in at]
            if changed:  # those are put in their places, the others stay
                self.rows = sorted_again(self.rows, {id(given[n]): rows[n] for n in at}, order, self.values)
                self.values.update((row.key, sort_key(row)) for row in changed)
            return changed
        values = {row.key: sort_key(row) for row in rows}
        if in_order:
            self.rows = rows
        elif order != self.order or values != self.values or self.in_order:
            self.rows = sort_rows(rows, order, values)
        else:
            by_key = {row.key: row for row in rows}
            self.rows = [row for old in self.rows if (row := by_key.get(old.key)) is not None]
        self.order, self.values, self.in_order = order, values, in_order
        return None
