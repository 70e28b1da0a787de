"""The order of the process rows: ``sort_rows`` sorts them all, ``order_key`` places a few among rows sorted."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from gputop.ui.widgets.rows import COLUMN_BY_NAME, ProcessRow, RowKey, SortOrder, gpu_order


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

    def placed(row: ProcessRow) -> tuple[object, ...]:
        value = sort_key(row)
        if value is None:
            return (1, 0, row.process.pid, gpu_order(row))
        return (0, _Descending(value) if order.descending else value, row.process.pid, gpu_order(row))

    return placed


def _value(pair: tuple[float | str | None, ProcessRow]) -> float | str:
    return pair[0]  # type: ignore[return-value]  # the present ones only
