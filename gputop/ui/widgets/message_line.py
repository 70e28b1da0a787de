"""The message line: where a screen says what was done or could not be, on the footer's row.

A message never covers data: it takes the row of the footer (the keys) for as long as it shows, on a
layer of its own, so nothing moves under it and the keys come back when it goes. One line, one message
at a time, cut with ``…`` where it does not fit. Messages raised together (the settings' warnings at
start) follow each other in the order raised: one shown while others wait gives way after
``SHORTEST_S``, so the newest is never long behind. Each screen has its own line: a message belongs to
the screen it was raised on and never follows the user to another.
``controls/message_control.py`` decides which screen's line shows what.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Literal

from rich.errors import MarkupError
from rich.text import Text
from textual.widgets import Static

Severity = Literal["information", "warning", "error"]
SHORTEST_S = 2.0  # how long a message shows, at least, before one waiting takes its place


@dataclass(eq=False)
class Note:
    """One message raised: its words, how grave, for how long once shown; ``gone`` once over or dismissed."""

    message: str
    title: str = ""
    severity: Severity = "information"
    timeout_s: float = 5.0
    markup: bool = False
    shown_at: float | None = None  # when it came on the line; None while it waits
    gone: bool = False
    line: MessageLine | None = None  # the line that shows it, once given to one

    @property
    def showing(self) -> bool:
        """Shown or waiting its turn: not dismissed, its time not over."""
        return not self.gone and (self.shown_at is None or time.monotonic() < self.shown_at + self.timeout_s)

    def text(self) -> Text:
        """The line's text: the title in bold, then the message on one line, cut with ``…``."""
        words = " ".join(self.message.split())
        try:
            body = Text.from_markup(words) if self.markup else Text(words)
        except MarkupError:  # not markup after all: shown as typed
            body = Text(words)
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.title:
            line.append(f"{self.title}: ", style="bold")
        line.append_text(body)
        return line


class MessageLine(Static):
    """A screen's message line: hidden while it has nothing to say."""

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.display = False
        self.note: Note | None = None  # on the line now
        self.waiting: list[Note] = []  # in the order raised

    def show(self, note: Note) -> None:
        """Show ``note`` now, or after those shown or waiting."""
        note.line = self
        self.waiting.append(note)
        if self.note is None:
            self._next()
        else:
            self._give_way(self.note)

    def take_away(self, note: Note) -> None:
        """``note`` is over (its time, or a key): the next one waiting, if it was on the line."""
        note.gone = True
        if self.note is note:
            self._next()

    def _next(self) -> None:
        self.waiting = [note for note in self.waiting if not note.gone]
        if not self.waiting:
            self.note = None
            self.display = False
            return
        note = self.note = self.waiting.pop(0)
        note.shown_at = time.monotonic()
        self.set_classes(f"-{note.severity}")
        self.update(note.text())
        self.display = True
        self.set_timer(note.timeout_s, partial(self.take_away, note))
        if self.waiting:
            self._give_way(note)

    def _give_way(self, note: Note) -> None:
        """Others wait: ``note`` leaves the line once it has shown ``SHORTEST_S``."""
        shown_at = time.monotonic() if note.shown_at is None else note.shown_at
        self.set_timer(max(0.0, shown_at + SHORTEST_S - time.monotonic()), partial(self.take_away, note))
