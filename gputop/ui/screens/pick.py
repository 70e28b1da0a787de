"""A dialog that picks one thing from a list (a user, a GPU, a sort column): Enter picks, Esc cancels."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from gputop.ui.widgets.choice_list import ChoiceList


class PickScreen(ModalScreen[str | None]):
    """Returns the picked option's id, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", key_display="Esc")]

    def __init__(self, title: str, options: list[Option], highlighted: int, id: str) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.options = options
        self.highlighted = highlighted

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-dialog"):
            yield Static(Text(self.title_text, style="bold"))
            yield ChoiceList(*self.options, id="pick-list")
        yield Footer()

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = self.highlighted
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
