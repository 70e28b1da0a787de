"""F6: pick the sort column from a list (htop's sort menu); columns not on screen are listed too."""

from __future__ import annotations

from rich.text import Text
from textual.widgets.option_list import Option

from gputop.ui.screens.pick import PickScreen
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.rows import COLUMNS, SortOrder, picked_order


class SortPickScreen(PickScreen):
    """Returns the chosen column's name, or None when cancelled."""

    def __init__(self, current: SortOrder, shown: tuple[str, ...]) -> None:
        options = []
        for column in COLUMNS:
            label = Text(f"{column.title:<10}")
            if column.name == current.column:
                label.append("▼ now" if current.descending else "▲ now", style="bold")
            elif column.name not in shown:
                label.append("(not on screen)", style="dim")
            options.append(Option(label, id=column.name))
        highlighted = [column.name for column in COLUMNS].index(current.column)
        super().__init__("Sort by", options, highlighted, id="sort-screen")


def pick_sort(table: ProcessTable) -> None:
    """F6 on ``table``: the sort menu over its screen; the column picked becomes its order (the current
    column keeps its direction)."""

    def picked(column: str | None) -> None:
        if column is not None:
            table.choose_sort(picked_order(table.sort, column))

    table.app.push_screen(SortPickScreen(table.sort, table.shown_columns), picked)
