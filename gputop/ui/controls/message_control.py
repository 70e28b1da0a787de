"""Every message the TUI shows goes through ``Messages.say`` (the app's ``notify`` calls it, Textual's own
notices included): to the message line of the screen it was raised on, never over data.

The screen a message is raised on is the one on top, or under a dialog the screen the dialog is over
(the dialog is gone by the time most messages come: a kill's outcome). A message raised on the main
screen stays there: the process screen opened after it shows its own line, empty. Thread-safe as
Textual's ``notify`` is: the line is changed on the app's thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen

from gputop.ui.widgets.message_line import MessageLine, Note, Severity

if TYPE_CHECKING:
    from textual.app import App

DEFAULT_S = 5.0  # how long a message shows when its caller does not say


class Messages:
    """The notes raised and the screens they belong to."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._notes: dict[Screen[Any], list[Note]] = {}  # raised on each screen, in order

    def say(
        self,
        message: str,
        *,
        title: str = "",
        severity: Severity = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> Note:
        """Show ``message`` on the line of the screen it is raised on, for ``timeout`` seconds."""
        note = Note(message, title, severity, DEFAULT_S if timeout is None else timeout, markup)
        screen = self._raised_on()
        # A closed screen's notes went with it; those over are forgotten.
        self._notes = {
            open_: [said for said in notes if said.showing]
            for open_, notes in self._notes.items()
            if open_ in self.app.screen_stack
        }
        self._notes.setdefault(screen, []).append(note)
        self.app.call_later(self._show, note, screen)
        return note

    def dismiss(self, note: Note) -> None:
        """Take ``note`` away now (a key read it), if it still shows."""
        note.gone = True
        if note.line is not None:
            note.line.take_away(note)

    def clear(self) -> None:
        """Take every note away, on every screen."""
        for notes in self._notes.values():
            for note in notes:
                self.dismiss(note)

    def shown(self) -> list[Note]:
        """The notes shown or waiting their turn, on the screens still open, oldest screen first."""
        return [note for screen in self.app.screen_stack for note in self._notes.get(screen, ()) if note.showing]

    def _raised_on(self) -> Screen[Any]:
        stack: list[Screen[Any]] = self.app.screen_stack
        under_dialogs = [screen for screen in stack if not isinstance(screen, ModalScreen)] or stack
        default: Screen[Any] = self.app.get_default_screen()
        return under_dialogs[-1] if under_dialogs else default

    def _show(self, note: Note, screen: Screen[Any]) -> None:
        if note.gone:
            return
        if not screen.is_attached:
            stack = self.app.screen_stack
            if not stack or screen in stack:  # not mounted yet (the main screen, as the app starts): soon
                self.app.call_after_refresh(self._show, note, screen)
            return  # closed: its notes went with it
        try:
            line = screen.query_children(MessageLine).first()
        except NoMatches:
            line = MessageLine()
            screen.mount(line)
        line.show(note)
