"""Bars and sparklines drawn with block characters."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from rich.text import Text

from gputop.core.format import bar_cells

SPARK_LEVELS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float | None], width: int, low: float, high: float) -> str:
    """The last ``width`` values as block characters between ``low`` and ``high``; right-aligned."""
    if width <= 0:
        return ""
    # From the end: the history holds far more points than any sparkline is wide.
    recent = list(islice(reversed(values), width))[::-1]
    span = high - low if high > low else 1.0
    chars = []
    for value in recent:
        if value is None:
            chars.append(" ")
            continue
        fraction = min(1.0, max(0.0, (value - low) / span))
        chars.append(SPARK_LEVELS[round(fraction * (len(SPARK_LEVELS) - 1))])
    return " " * (width - len(chars)) + "".join(chars)


def bar_pieces(percent: float | None, width: int, style: str) -> tuple[tuple[str, str], ...]:
    """A horizontal bar ``width`` cells wide, filled to ``percent`` with eighth-cell precision, as
    (text, style) pieces."""
    cells = bar_cells(percent, width)
    if cells is None:
        return (("╌" * max(0, width), "dim"),)
    filled, empty = cells
    return ((filled, style), (empty, "bright_black"))


def bar(percent: float | None, width: int, style: str) -> Text:
    """The bar of ``bar_pieces`` as Rich Text."""
    return Text.assemble(*bar_pieces(percent, width, style))
