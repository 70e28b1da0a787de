"""The alert notification on screen: at most one, top-right, gone at the next key.

``feed.AlertAnnouncer`` decides which alert is news; this puts it on screen and takes it away. The
title bar counts the alerts raised (``⚠ 3``), the log (``!``) lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.notifications import Notification, Notify
from textual.screen import ModalScreen

from gputop.core.analysis.alerts import AlertEvent
from gputop.ui.feed import NOTICE_S, AlertAnnouncer

if TYPE_CHECKING:
    from textual.app import App


class AlertToasts:
    """Shows the announcer's notification, remembers it, and dismisses it when asked (any key)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.announcer = AlertAnnouncer()
        self._toast: Notification | None = None

    def show(self, events: Sequence[AlertEvent], now: float) -> None:
        """Announce what this delivery's ``events`` raised, if it is news and nothing covers the screen;
        ``now``: the newest snapshot's timestamp."""
        # No notification over a dialog (the kill dialog's instructions, the help): the title counts it.
        blocked = bool(self.app.screen_stack) and isinstance(self.app.screen, ModalScreen)
        on_screen = self._toast is not None and not self._toast.has_expired
        notice = self.announcer.announce(events, now, on_screen=on_screen, blocked=blocked)
        if notice is None:
            return
        title, message, severity = notice
        self._toast = Notification(message, title, severity, NOTICE_S, markup=False)
        self.app.post_message(Notify(self._toast))

    def dismiss(self) -> None:
        """Take the alert's notification off the screen (a key was pressed); others stay."""
        toast, self._toast = self._toast, None
        if toast is None:
            return
        # Textual's public call clears every notification (it has none for one): the key that dismisses
        # the alert comes before any notice its own action gives, so only notices already read go too.
        if not toast.has_expired:
            self.app.clear_notifications()
