"""Pick one user among those with GPU processes ("all" first)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from gputop.core.format import safe_text
from gputop.ui.widgets.choice_list import ChoiceList


class UserPickScreen(ModalScreen[str | None]):
    """Returns the chosen user, ALL for every user, or None when cancelled."""

    ALL = "\x00all"
    BINDINGS = [Binding("escape", "cancel", "Cancel", key_display="Esc")]

    def __init__(self, users: list[str], current: str | None) -> None:
        super().__init__(id="user-screen")
        self.users = users
        self.current = current

    def compose(self) -> ComposeResult:
        options = [Option(Text("all", style="bold"), id=self.ALL)]
        options += [Option(Text(safe_text(user)), id=user) for user in self.users]
        with Vertical(id="user-dialog"):
            yield Static(Text("Show processes of", style="bold"))
            yield ChoiceList(*options, id="user-list")
        yield Footer()

    def on_mount(self) -> None:
        user_list = self.query_one(OptionList)
        user_list.highlighted = 1 + self.users.index(self.current) if self.current in self.users else 0
        user_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
