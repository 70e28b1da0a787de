"""The base of a screen over the main one that follows the data: the app hands it each snapshot."""

from __future__ import annotations

from textual.binding import ActiveBinding
from textual.screen import Screen

from gputop.core.model import Snapshot
from gputop.ui.keymap import in_footer_order


class LiveScreen(Screen[None]):
    """A screen the app shows each new snapshot, and tells when the title changes.

    Only once it is mounted: a screen just opened shows the app's newest snapshot in its ``on_mount``.
    """

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        # The screen's own keys first (Esc Back), then those of a process table and the app's, in keymap's order.
        return in_footer_order(super().active_bindings, own=self)

    def show_snapshot(self, snapshot: Snapshot) -> None:
        """A new tick's snapshot (the display is not frozen)."""

    def update_title(self) -> None:
        """The title changed (the interval, a replay's position): a screen that shows it says it again."""
