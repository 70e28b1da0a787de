"""Textual's Footer, rebuilt once however many times the bindings change before it is next drawn.

The Footer makes one widget per key and builds them all again at each change of the bindings
(a focus change, a screen pushed, the terminal's focus); each change queues a rebuild of its own.
At gputop's start five changes arrive within a few frames: five rebuilds of some twenty widgets,
styles and all, a fifth of a second of CPU on a small machine. The first rebuild queued reads the
bindings as they are when it runs, so the others add nothing.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A Footer whose rebuilds queued between two frames are one."""

    _rebuild_queued = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._rebuild_queued and screen is self.screen:
            return  # the rebuild already queued will show the bindings as they are by then
        super().bindings_changed(screen)
        # Footer queues a rebuild only for its own screen while the app has the focus.
        self._rebuild_queued = bool(screen.app.app_focus and self.is_attached and screen is self.screen)

    async def recompose(self) -> None:
        self._rebuild_queued = False
        await super().recompose()
