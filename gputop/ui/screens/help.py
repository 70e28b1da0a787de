"""Every key, from the app's bindings (so read-only mode lists no signal keys)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

_NOTES = (
    "Filter: plain text matches command, user, PID or container (any case); re: takes a regular expression.",
    "Mouse: click a process to select it, a column header to sort, a GPU card for its detail.",
    "Ctrl+P opens the command palette: every action is there too.",
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f1,question_mark,h", "close", "Close", key_display="Esc")]

    def __init__(self, entries: list[tuple[str, str]], notes: tuple[str, ...] = ()) -> None:
        """``notes``: lines about this machine, after the general ones (which interfaces NET counts)."""
        super().__init__(id="help-screen")
        self.entries = entries
        self.notes = notes

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for keys, description in self.entries:
            table.add_row(keys, description)
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("gputop keys", style="bold"), id="help-title")
            yield Static(table, id="help-keys")
            yield Static(Text("\n".join((*_NOTES, *self.notes)), style="dim"), id="help-notes")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
