"""F6: pick the sort column from a list (htop's sort menu); columns not on screen are listed too."""

from __future__ import annotations

from rich.text import Text
from textual.widgets.option_list import Option

from gputop.ui.screens.pick import PickScreen
from gputop.ui.widgets.rows import COLUMNS, SortOrder


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
