"""Every alert raised or cleared this session, with its time, newest last."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from gputop.core.analysis.alerts import AlertEvent


def _clock(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def event_line(event: AlertEvent) -> Text:
    """``HH:MM:SS ⚠ message`` (raised) or ``HH:MM:SS ✓ message`` (cleared); an alert updated since it was
    raised keeps its start time and shows its latest message, and when that came
    (``HH:MM:SS ⚠ message · updated HH:MM:SS``)."""
    started = event.time if event.started is None else event.started
    mark, style = ("✓", "green") if event.cleared else ("⚠", "bold yellow")
    line = Text.assemble((_clock(started), "bold"), " ", (mark, style), " ", event.message)
    if event.updated:
        line.append(f" · updated {_clock(event.time)}", style="dim")
    return line


class AlertLogScreen(ModalScreen[None]):
    """The alert log; Esc closes."""

    BINDINGS = [Binding("escape,q,exclamation_mark", "close", "Close", key_display="Esc")]

    def __init__(self, events: tuple[AlertEvent, ...]) -> None:
        super().__init__(id="alert-log-screen")
        self.events = events

    def compose(self) -> ComposeResult:
        if self.events:
            body = Text("\n").join(event_line(event) for event in self.events)
        else:
            body = Text("no alerts yet", style="dim italic")
        with VerticalScroll(id="alert-log-dialog"):
            yield Static(Text(f"Alerts ({len(self.events)})", style="bold"), id="alert-log-title")
            yield Static(body, id="alert-log-events")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#alert-log-dialog").scroll_end(animate=False)

    def lines(self) -> list[str]:
        """The log as shown, one string per event (for tests)."""
        return str(self.query_one("#alert-log-events", Static).content).splitlines()

    def action_close(self) -> None:
        self.dismiss(None)
