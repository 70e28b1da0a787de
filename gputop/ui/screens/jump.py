"""Ask where a replay should jump: a time of day or a move relative to now."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static


class JumpScreen(ModalScreen[str | None]):
    """Returns the text typed (``HH:MM:SS``, ``+90s``, ``-2m``), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", key_display="Esc")]

    def __init__(self, now: str) -> None:
        super().__init__(id="jump-screen")
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-dialog"):
            yield Static(Text.assemble(("Jump to", "bold"), f"  (now {self.now})"))
            yield Input(placeholder="HH:MM:SS, +90s, -2m, +1m30s", id="jump-input")
            yield Static(Text("Enter jumps · Esc cancels", style="dim"))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
