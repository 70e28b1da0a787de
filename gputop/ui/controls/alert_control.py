"""The alert's message on screen: at most one, on the message line, gone at the next key.

``feed.AlertAnnouncer`` decides which alert is news; this puts it on screen and takes it away. The
title bar counts the alerts raised (``⚠ 3``), the log (``!``) lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.screen import ModalScreen

from gputop.core.analysis.alerts import AlertEvent
from gputop.ui.controls.message_control import Messages
from gputop.ui.feed import NOTICE_S, AlertAnnouncer
from gputop.ui.widgets.message_line import Note

if TYPE_CHECKING:
    from textual.app import App


class AlertToasts:
    """Shows the announcer's message, remembers it, and dismisses it when asked (any key)."""

    def __init__(self, app: App[Any], messages: Messages) -> None:
        self.app, self.messages = app, messages
        self.announcer = AlertAnnouncer()
        self._toast: Note | None = None

    def show(self, events: Sequence[AlertEvent], now: float) -> None:
        """Announce what this delivery's ``events`` raised, if it is news and nothing covers the screen;
        ``now``: the newest snapshot's timestamp."""
        # No notification over a dialog (the kill dialog's instructions, the help): the title counts it.
        blocked = bool(self.app.screen_stack) and isinstance(self.app.screen, ModalScreen)
        on_screen = self._toast is not None and self._toast.showing
        notice = self.announcer.announce(events, now, on_screen=on_screen, blocked=blocked)
        if notice is None:
            return
        title, message, severity = notice
        self._toast = self.messages.say(message, title=title, severity=severity, timeout=NOTICE_S, markup=False)

    def dismiss(self) -> None:
        """Take the alert's message off the screen (a key was pressed); others stay."""
        toast, self._toast = self._toast, None
        if toast is not None:
            self.messages.dismiss(toast)
