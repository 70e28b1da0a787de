"""Where things go on screen for a terminal size: plain arithmetic, no widgets.

The main screen asks this module whether the terminal is too small, how many card columns fit,
whether cards fold into their compact form, and how tall each row of cards is. It plans from what it is
given: the GPUs, and for the cards' warning marks, the contents the screen built (``MarkedCard``); it
draws nothing and imports no widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gputop.core.model import GpuSample

MIN_WIDTH, MIN_HEIGHT = 40, 10
# Full cards give way to compact ones when they would leave the panel fewer rows than this (nvitop
# folds its cards too: a dozen rows is not enough to see a multi-GPU job's ranks).
ROWS_WANTED = 15
# Compact cards unfold only when full ones would leave this many rows more than wanted: a process
# count that wavers at the threshold does not fold and unfold the cards tick after tick.
UNFOLD_MARGIN = 2
# The process panel always keeps room for this many rows: the cards scroll when they need more;
# below SMALL_HEIGHT lines, one line per GPU comes first (cards_room).
PANEL_ROWS_MIN, SMALL_HEIGHT = 5, 24
# Lines of the panel besides its rows: its border above (with its title) and the header.
PANEL_CHROME = 2
# Two columns of cards from this terminal width (full cards, compact cards).
TWO_COLUMNS_FROM = {False: 100, True: 170}
# The grid puts a cell between two columns. (Compact cards need no line under them: the panel's
# border, with its title, is the line between them and the processes.)
COLUMN_GUTTER = 1
# A compact card's side padding, a full card's borders, and the corners a border title leaves.
COMPACT_PADDING, FULL_BORDERS, TITLE_CORNERS = 2, 2, 2


def too_small(width: int, height: int) -> bool:
    """Below this size only a "terminal too small" line is shown."""
    return width < MIN_WIDTH or height < MIN_HEIGHT


def card_lines(gpu: GpuSample, compact: bool, one_line: bool = False) -> int:
    """Rows on screen a GPU's card takes, borders included (``one_line``: a compact card without its
    MIG line, where only one line per GPU fits)."""
    if compact:
        return 2 if gpu.mig_devices and not gpu.lost and gpu.answering and not one_line else 1
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


def cards_height(gpus: Sequence[GpuSample], width: int, compact: bool, one_line: bool = False) -> int:
    """Lines all the cards take when nothing scrolls."""
    columns = card_columns(len(gpus), compact, width)
    return sum(row_heights([card_lines(gpu, compact, one_line) for gpu in gpus], columns))


def rows_left(gpus: Sequence[GpuSample], width: int, height: int, *, compact: bool, host_shown: bool) -> int:
    """Process rows the panel shows under the cards in this form (they scroll past ``cards_room``)."""
    room = cards_room(height, panel_shown=True, host_shown=host_shown, gpu_count=len(gpus))
    cards = min(cards_height(gpus, width, compact, compact and one_line_each(gpus, width, room)), room)
    return max(0, height - 2 - (1 if host_shown else 0) - cards - PANEL_CHROME)


class MarkedCard(Protocol):
    """What the plan needs of a card's content: whether it has warning marks, and whether a card of a
    width keeps them all (``widgets/card_lines.CardContent`` answers both, by drawing itself)."""

    def warns(self, compact: bool) -> bool: ...

    def keeps_marks(self, width: int, *, compact: bool) -> bool: ...


def card_width(count: int, width: int, compact: bool) -> int:
    """Cells across one card (the GPU area's scrollbar not counted: it shows only when cards scroll)."""
    columns = card_columns(count, compact, width)
    return (width - COLUMN_GUTTER * (columns - 1)) // columns


def needs_compact(
    gpus: Sequence[GpuSample],
    width: int,
    height: int,
    *,
    process_rows: int,
    panel_shown: bool,
    host_shown: bool = True,
    contents: Sequence[MarkedCard] = (),
    shown_compact: bool = False,
) -> bool:
    """Compact cards when full ones would scroll or leave the panel fewer than ROWS_WANTED rows (or
    fewer than it has processes); then whichever form leaves the most rows while every card keeps
    its warning marks (``contents``: what the cards show). With the panel hidden, full cards unless
    they scroll. ``shown_compact``: the cards are compact now (they unfold with a margin)."""
    if not panel_shown:
        return cards_height(gpus, width, False) > cards_room(height, panel_shown=False, host_shown=host_shown)
    count = len(gpus)
    room = cards_room(height, panel_shown=True, host_shown=host_shown, gpu_count=count)
    fits = {
        form: cards_height(gpus, width, form, form and one_line_each(gpus, width, room)) <= room
        for form in (False, True)
    }
    # A card scrolled out of sight shows none of its marks: a form that scrolls keeps them only on a
    # machine with nothing to warn of.
    keeps = {
        form: all(content.keeps_marks(card_width(count, width, form), compact=form) for content in contents)
        and (fits[form] or not any(content.warns(form) for content in contents))
        for form in (False, True)
    }
    rows = {form: rows_left(gpus, width, height, compact=form, host_shown=host_shown) for form in (False, True)}
    # A form that cuts a warning is chosen only when the other cuts one too.
    forms = [form for form in (False, True) if keeps[form]] or [False, True]
    wanted = min(process_rows, ROWS_WANTED) + (UNFOLD_MARGIN if shown_compact else 0)
    if False in forms and fits[False] and rows[False] >= wanted:
        return False
    # The most rows; on a tie (the cards scroll either way) the form with less hidden, then full
    # cards (they say more).
    return max(forms, key=lambda form: (rows[form], -cards_height(gpus, width, form), not form))


def cards_room(height: int, *, panel_shown: bool, host_shown: bool, gpu_count: int = 0) -> int:
    """Lines the GPU area may take: all but the title, host strip, footer and, when shown, a panel
    with room for PANEL_ROWS_MIN rows (the cards scroll beyond that). On a terminal shorter than
    SMALL_HEIGHT, a line for each of ``gpu_count`` GPUs comes first (its memory in view, 40x10
    included) while the panel keeps one row."""
    room = height - 2 - (1 if host_shown else 0)  # the title bar and the footer
    if not panel_shown:
        return max(1, room)
    least = min(gpu_count, room - PANEL_CHROME - 1) if height < SMALL_HEIGHT else 0
    return max(1, room - PANEL_ROWS_MIN - PANEL_CHROME, least)


def one_line_each(gpus: Sequence[GpuSample], width: int, room: int) -> bool:
    """Whether compact cards fold their MIG lines: only where that makes every GPU fit in ``room``."""
    return cards_height(gpus, width, True) > room >= cards_height(gpus, width, True, one_line=True)


@dataclass(frozen=True, slots=True)
class CardLayout:
    """How the GPU cards are laid out: compact or full, how many columns, each row's height."""

    compact: bool
    columns: int
    heights: tuple[int, ...]
    one_line: bool = False  # compact cards without their MIG lines (one_line_each)

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
    host_shown: bool = True,
    contents: Sequence[MarkedCard] = (),
    shown_compact: bool = False,
) -> CardLayout:
    """Lay out the cards: the user's choice of compact, else whatever leaves the panel room."""
    if compact_choice is None:
        compact = needs_compact(
            gpus, width, height, process_rows=process_rows, panel_shown=panel_shown, host_shown=host_shown,
            contents=contents, shown_compact=shown_compact,
        )
    else:
        compact = compact_choice
    columns = card_columns(len(gpus), compact, width)
    room = cards_room(height, panel_shown=panel_shown, host_shown=host_shown, gpu_count=len(gpus))
    one_line = compact and one_line_each(gpus, width, room)
    heights = row_heights([card_lines(gpu, compact, one_line) for gpu in gpus], columns)
    return CardLayout(compact, columns, tuple(heights), one_line)


def toggled_choice(shown_compact: bool, auto_compact: bool) -> bool | None:
    """The choice after ``c``: the other form, held through resizes; None (gputop picks again by
    size) when the other form is the one gputop would pick by itself."""
    wanted = not shown_compact
    return None if wanted == auto_compact else wanted


def gpu_range(indices: Sequence[int]) -> str:
    """How many GPUs a machine has, in words: "GPUs 0-3", "GPU 0", "no GPU"."""
    if not indices:
        return "no GPU"
    return f"GPUs {indices[0]}-{indices[-1]}" if len(indices) > 1 else f"GPU {indices[0]}"


# -- the GPU detail screen ---------------------------------------------------------------------

# A row of charts: its border title, 5 rows of plot (4 intervals: ticks on every other row) and the
# time labels; at most 13 (10 intervals). Rows of charts keep an even number of intervals (a round
# middle tick falls on a row).
CHART_ROW_MIN, CHART_ROW_MAX = 7, 13
# Lines the detail screen's parts take at their least where all are shown by the stylesheet (the
# charts grid, the activity charts, the process table); below that the screen is laid out here.
DETAIL_CSS_MIN = {"charts": 16, "activity": 8, "processes": 3}
# The footer, and the line that says what is out of view.
DETAIL_FOOTER, OUT_OF_VIEW_LINE = 1, 1
# The process table's border and header; at most this many process rows where room is short.
TABLE_CHROME, TABLE_ROWS_SHORT = 2, 8
# The diagnosis box where room is short: three lines and its borders (it scrolls, saying so).
DIAGNOSIS_SHORT = 5


@dataclass(frozen=True, slots=True)
class DetailRoom:
    """How the detail screen's parts are sized: ``header`` lines docked at the top (the rest of its
    lines go below the charts); None for the others: the stylesheet sizes them (everything fits)."""

    header: int
    chart_row: int | None = None
    activity: int | None = None
    processes: int | None = None
    diagnosis: int | None = None


def detail_room(height: int, header_lines: int, diagnosis: int, *, activity: bool, process_rows: int) -> DetailRoom:
    """The detail screen on a terminal ``height`` lines tall, its header ``header_lines`` long, the
    diagnosis box ``diagnosis`` lines (0: hidden): memory and temperature, the first row of charts,
    always show under the header and the diagnosis without scrolling, the header giving up lines for
    them (down to one); what does not fit scrolls below them."""
    room = height - DETAIL_FOOTER
    processes = max(DETAIL_CSS_MIN["processes"], process_rows + TABLE_CHROME)
    everything = DETAIL_CSS_MIN["charts"] + (DETAIL_CSS_MIN["activity"] if activity else 0) + processes
    if room - header_lines - diagnosis >= everything:
        return DetailRoom(header_lines)
    diagnosis = min(diagnosis, DIAGNOSIS_SHORT)
    header = max(1, min(header_lines, room - OUT_OF_VIEW_LINE - diagnosis - CHART_ROW_MIN))
    row = max(CHART_ROW_MIN, min(CHART_ROW_MAX, room - OUT_OF_VIEW_LINE - header - diagnosis))
    row -= (row - CHART_ROW_MIN) % 2  # an even number of intervals
    return DetailRoom(
        header,
        chart_row=row,
        activity=row if activity else None,
        processes=min(processes, TABLE_ROWS_SHORT + TABLE_CHROME),
        diagnosis=DIAGNOSIS_SHORT,
    )
