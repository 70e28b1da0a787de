"""The base of a screen over the main one that follows the data: the app hands it each tick."""

from __future__ import annotations

from textual.binding import ActiveBinding
from textual.screen import Screen

from gputop.core.analysis.tick_feed import Tick
from gputop.ui.keymap import in_footer_order


class LiveScreen(Screen[None]):
    """A screen the app hands each new tick, and tells when the title changes.

    A screen is made with the tick shown when it opened (``tick``), and shows the newest it was handed in its
    ``on_mount``: a tick that comes between opening it and its widgets being made is shown once they are.
    """

    tick: Tick | None = None  # the newest tick handed to it (None: none yet)

    def hand(self, tick: Tick) -> None:
        """The app's newest tick: shown now if the screen is built, else once it is."""
        self.tick = tick
        if self.is_mounted:
            self.show(tick)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        # The screen's own keys first (Esc Back), then those of a process table and the app's, in keymap's order.
        return in_footer_order(super().active_bindings, own=self)

    def show(self, tick: Tick) -> None:
        """A new tick: its snapshot and what was judged of it (the display is not frozen)."""

    def update_title(self) -> None:
        """The title changed (the interval, a replay's position): a screen that shows it says it again."""
