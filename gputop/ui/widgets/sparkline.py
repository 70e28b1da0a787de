"""Bars and sparklines drawn with block characters."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice

from rich.text import Text

from gputop.core.format import bar_cells
from gputop.core.glyphs import glyphs


def _cells(values: Iterable[float | None], low: float, high: float) -> str:
    """One block character per value (a space for one not known), between ``low`` and ``high``."""
    span = high - low if high > low else 1.0
    levels = glyphs().spark_levels
    return "".join(_cell(value, low, span, levels) for value in values)


def _cell(value: float | None, low: float, span: float, levels: str) -> str:
    """The block character of one value, ``span`` above ``low`` the top one; a space for one not known."""
    if value is None:
        return " "
    return levels[round(min(1.0, max(0.0, (value - low) / span)) * (len(levels) - 1))]


def sparkline(values: Sequence[float | None], width: int, low: float, high: float) -> str:
    """The last ``width`` values as block characters between ``low`` and ``high``; right-aligned."""
    if width <= 0:
        return ""
    # From the end: the history holds far more points than any sparkline is wide.
    chars = _cells(list(islice(reversed(values), width))[::-1], low, high)
    return " " * (width - len(chars)) + chars


class SparkCells:
    """One sparkline as last drawn, moved on by a column for each value appended since, rather than
    drawn again from its ``width`` values every tick.

    A history only grows at its end (its oldest values dropped), and a cell depends on its value and
    the scale alone: while the width and the scale are those of the last drawing, the cells are the
    last ones less the first few, plus one for each new value, which is what ``sparkline`` draws.
    ``stamps`` (the history's timestamps, one per value) say how many values are new; anything
    else (another history, a new scale or width, a stamp not found) draws it again in full.
    """

    __slots__ = ("_cells", "_key", "_source", "_last", "_count")

    def __init__(self) -> None:
        self._cells = ""
        self._key: tuple[int, float, float] | None = None
        self._source: object = None
        self._last: float | None = None  # the newest stamp drawn
        self._count = 0  # how many values there were then

    def draw(
        self, values: Sequence[float | None], stamps: Sequence[float], width: int, low: float, high: float,
        source: object = None,
    ) -> str:
        """``sparkline(values, width, low, high)``, from the last drawing where it can; ``source`` is
        what the values belong to (the same object each tick: the GPU's history)."""
        key = (width, low, high)
        count = len(stamps)
        if key == self._key and source is self._source and count == len(values) and count:
            last = stamps[-1]
            if last == self._last and count == self._count:
                return self._cells  # nothing appended since
            # One value appended (every tick but a skipped frame): its cell alone, the rest moved over.
            one = last != self._last and count > 1 and width > 1 and stamps[-2] == self._last
            appended = 1 if one else self._appended(stamps, width)
            if appended is not None:
                if appended == 1:
                    span = high - low if high > low else 1.0
                    cells = self._cells[1:] + _cell(values[-1], low, span, glyphs().spark_levels)
                elif appended:
                    cells = self._cells[appended:] + _cells(values[count - appended :], low, high)
                else:
                    cells = self._cells
                if appended and count < width:  # a history shorter than the sparkline, its oldest values dropped
                    cells = " " * (width - count) + cells[width - count :]
                self._cells, self._last, self._count = cells, last, count
                return cells
        self._cells = sparkline(values, width, low, high)
        self._key, self._source = key, source
        self._last, self._count = (stamps[-1], count) if count and count == len(values) else (None, 0)
        return self._cells

    def _appended(self, stamps: Sequence[float], width: int) -> int | None:
        """How many values came after the newest one drawn (fewer than ``width``); None: not known."""
        last, count = self._last, len(stamps)
        if last is None:
            return None
        for back in range(min(count, width)):
            if stamps[count - 1 - back] == last:
                # Nothing new by its stamp, yet more values than before: a stamp repeated, not known.
                return None if back == 0 and count != self._count else back
        return None


class Sparklines:
    """A card's sparklines by name, each a ``SparkCells`` kept from tick to tick."""

    __slots__ = ("_by_name",)

    def __init__(self) -> None:
        self._by_name: dict[str, SparkCells] = {}

    def draw(
        self, name: str, values: Sequence[float | None], stamps: Sequence[float], width: int, low: float,
        high: float, source: object = None,
    ) -> str:
        cells = self._by_name.get(name)
        if cells is None:
            cells = self._by_name[name] = SparkCells()
        return cells.draw(values, stamps, width, low, high, source)


def bar_pieces(percent: float | None, width: int, style: str) -> tuple[tuple[str, str], ...]:
    """A horizontal bar ``width`` cells wide, filled to ``percent`` with eighth-cell precision, as
    (text, style) pieces."""
    cells = bar_cells(percent, width)
    if cells is None:
        return ((glyphs().bar_unknown * max(0, width), "dim"),)
    filled, empty = cells
    return ((filled, style), (empty, "bright_black"))


def bar(percent: float | None, width: int, style: str) -> Text:
    """The bar of ``bar_pieces`` as Rich Text."""
    return Text.assemble(*bar_pieces(percent, width, style))
