"""Confirm before signalling: names every target and offers SIGTERM, SIGKILL or SIGINT."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from gputop.core.format import fmt_bytes, safe_text
from gputop.core.host.signals import SIGNALS
from gputop.core.host.visibility import not_visible_words
from gputop.ui.panel.rows import ProcessRow
from gputop.ui.widgets.choice_list import ChoiceList

_SIGNAL_HELP = {
    "SIGTERM": "ask it to exit",
    "SIGKILL": "stop it at once, no clean-up",
    "SIGINT": "interrupt, like Ctrl+C",
}
_MAX_LISTED = 12


def target_line(row: ProcessRow) -> Text:
    """One target as the dialog lists it; every user-controlled string goes through safe_text."""
    p = row.process
    command = safe_text(p.command or p.name, 60) if p.visible else not_visible_words(p.not_visible_reason)
    return Text.assemble(
        (f"PID {p.pid:<8}", "bold"),
        (f"{safe_text(p.user, 12) if p.visible else '?':<12} ", "yellow"),
        f"GPU {row.gpu_label:<5}",
        (f"{fmt_bytes(p.gpu_memory):>9}  ", "cyan"),
        command,
    )


class KillScreen(ModalScreen[int | None]):
    """Returns the chosen signal number, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", key_display="Esc")]

    def __init__(self, targets: list[ProcessRow]) -> None:
        super().__init__(id="kill-screen")
        self.targets = targets

    def compose(self) -> ComposeResult:
        count = len(self.targets)
        with Vertical(id="kill-dialog"):
            yield Static(
                Text(f"Send a signal to {count} process{'es' if count != 1 else ''}?", style="bold"),
                id="kill-title",
            )
            lines = Text("\n").join(target_line(row) for row in self.targets[:_MAX_LISTED])
            if count > _MAX_LISTED:
                lines.append(f"\n… and {count - _MAX_LISTED} more", style="italic")
            yield Static(lines, id="kill-targets")
            stale = sorted({row.gpu_label for row in self.targets if row.process.stale})
            if stale:
                yield Static(
                    Text(
                        f"⚠ Old data: GPU {', '.join(stale)} is not answering; its rows are as last seen"
                        " and the process may have ended since.",
                        style="bold yellow",
                    ),
                    id="kill-stale",
                )
            yield ChoiceList(
                *(
                    Option(Text.assemble((f"{name:<8}", "bold"), f" ({number:>2})  {_SIGNAL_HELP[name]}"), id=name)
                    for name, number in SIGNALS
                ),
                id="kill-signals",
            )
            yield Static(
                Text("Enter sends · Esc cancels · each PID is re-checked by its start time first", style="dim"),
                id="kill-hint",
            )
        yield Footer()

    def on_mount(self) -> None:
        signals = self.query_one(OptionList)
        signals.highlighted = 0
        signals.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        numbers = dict(SIGNALS)
        self.dismiss(numbers[event.option.id or "SIGTERM"])

    def action_cancel(self) -> None:
        self.dismiss(None)
