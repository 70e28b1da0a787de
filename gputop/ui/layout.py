"""Where things go on screen for a terminal size: plain arithmetic, no widgets.

The app asks this module whether the terminal is too small, how many card columns fit,
whether cards fold into their compact form, and how tall each row of cards is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gputop.core.model import GpuSample

MIN_WIDTH, MIN_HEIGHT = 40, 10
# Lines the title bar and the footer take, and the border of the GPU area.
CHROME_LINES = 3
# The process panel keeps room for this many rows before full cards give way to compact ones.
PANEL_ROWS_KEPT = 12
# Lines of a panel with no rows (borders, header, the "no GPU processes" line).
PANEL_MIN_LINES = 6
# The process panel always keeps room for this many rows: the cards scroll when they need more.
PANEL_ROWS_MIN = 5
# Lines of the panel besides its rows: two borders and the header.
PANEL_CHROME = 3
# Two columns of cards from this terminal width (full cards, compact cards).
TWO_COLUMNS_FROM = {False: 100, True: 170}


def too_small(width: int, height: int) -> bool:
    """Below this size only a "terminal too small" line is shown."""
    return width < MIN_WIDTH or height < MIN_HEIGHT


def card_lines(gpu: GpuSample, compact: bool) -> int:
    """Rows on screen a GPU's card takes, borders included."""
    if compact:
        return 2 if gpu.mig_devices and not gpu.lost and gpu.answering else 1
    if gpu.lost:
        return 3
    # The ACT line (GPM activity) only on a GPU that has GPM.
    return 5 + (gpu.activity is not None) + len(gpu.mig_devices)


def card_columns(count: int, compact: bool, width: int) -> int:
    """Cards side by side: two on a wide terminal when there are two GPUs or more."""
    if count < 2:
        return 1
    return 2 if width >= TWO_COLUMNS_FROM[compact] else 1


def row_heights(lines: Sequence[int], columns: int) -> list[int]:
    """The height of each row of cards: cards side by side share the tallest one's height."""
    return [max(lines[start : start + columns]) for start in range(0, len(lines), columns)]


def needs_compact(gpus: Sequence[GpuSample], width: int, height: int, *, process_rows: int, panel_shown: bool) -> bool:
    """Whether full cards would squeeze the process panel below a dozen rows (or leave no room)."""
    columns = card_columns(len(gpus), False, width)
    needed = sum(row_heights([card_lines(gpu, False) for gpu in gpus], columns))
    panel = min(process_rows, PANEL_ROWS_KEPT) + 3 if panel_shown else 0
    return needed + max(panel, PANEL_MIN_LINES if panel_shown else 0) > height - CHROME_LINES


def cards_room(height: int, *, panel_shown: bool, host_shown: bool) -> int:
    """Lines the GPU area may take: all but the title, host strip, footer and, when shown, a panel
    with room for PANEL_ROWS_MIN rows (the cards scroll beyond that)."""
    room = height - 2 - (1 if host_shown else 0)  # the title bar and the footer
    if panel_shown:
        room -= PANEL_ROWS_MIN + PANEL_CHROME
    return max(1, room)


@dataclass(frozen=True, slots=True)
class CardLayout:
    """How the GPU cards are laid out: compact or full, how many columns, each row's height."""

    compact: bool
    columns: int
    heights: tuple[int, ...]

    def height_of(self, position: int) -> int:
        """The height of the row that card number ``position`` (0-based, in order) sits in."""
        return self.heights[position // self.columns]


def plan_cards(
    gpus: Sequence[GpuSample],
    width: int,
    height: int,
    *,
    compact_choice: bool | None,
    process_rows: int,
    panel_shown: bool,
) -> CardLayout:
    """Lay out the cards: the user's choice of compact, else whatever leaves the panel room."""
    if compact_choice is None:
        compact = needs_compact(gpus, width, height, process_rows=process_rows, panel_shown=panel_shown)
    else:
        compact = compact_choice
    columns = card_columns(len(gpus), compact, width)
    heights = row_heights([card_lines(gpu, compact) for gpu in gpus], columns)
    return CardLayout(compact, columns, tuple(heights))


def gpu_range(indices: Sequence[int]) -> str:
    """How many GPUs a machine has, in words: "GPUs 0-3", "GPU 0", "no GPU"."""
    if not indices:
        return "no GPU"
    return f"GPUs {indices[0]}-{indices[-1]}" if len(indices) > 1 else f"GPU {indices[0]}"
