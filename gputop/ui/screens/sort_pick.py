"""F6: pick the sort column from a list (htop's sort menu); hidden columns are listed too."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from gputop.ui.state import COLUMNS, SortOrder
from gputop.ui.widgets.choice_list import ChoiceList


class SortPickScreen(ModalScreen[str | None]):
    """Returns the chosen column's name, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", key_display="Esc")]

    def __init__(self, current: SortOrder, shown: tuple[str, ...]) -> None:
        super().__init__(id="sort-screen")
        self.current = current
        self.shown = shown

    def compose(self) -> ComposeResult:
        options = []
        for column in COLUMNS:
            label = Text(f"{column.title:<10}")
            if column.name == self.current.column:
                label.append("▼ now" if self.current.descending else "▲ now", style="bold")
            elif column.name not in self.shown:
                label.append("(not on screen)", style="dim")
            options.append(Option(label, id=column.name))
        with Vertical(id="sort-dialog"):
            yield Static(Text("Sort by", style="bold"))
            yield ChoiceList(*options, id="sort-list")
        yield Footer()

    def on_mount(self) -> None:
        sort_list = self.query_one(OptionList)
        sort_list.highlighted = [column.name for column in COLUMNS].index(self.current.column)
        sort_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
