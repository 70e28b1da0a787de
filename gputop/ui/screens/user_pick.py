"""u: pick one user among those with GPU processes ("all" first)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets.option_list import Option

from gputop.core.format import safe_text
from gputop.ui.screens.pick import PickScreen


class UserPickScreen(PickScreen):
    """Returns the chosen user, ALL for every user, or None when cancelled."""

    ALL = "\x00all"

    def __init__(self, users: list[str], current: str | None) -> None:
        self.users = users
        options = [Option(Text("all", style="bold"), id=self.ALL)]
        options += [Option(Text(safe_text(user)), id=user) for user in users]
        highlighted = 1 + users.index(current) if current in users else 0
        super().__init__("Show processes of", options, highlighted, id="user-screen")
