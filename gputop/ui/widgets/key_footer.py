"""Textual's Footer, rebuilt once however many times the bindings change before it is next drawn,
and not at all when they come back as they are shown.

The Footer makes one widget per key and builds them all again at each change of the bindings
(a focus change, a screen pushed, the terminal's focus); each change queues a rebuild of its own.
At gputop's start five changes arrive within a few frames: five rebuilds of some twenty widgets,
styles and all, a fifth of a second of CPU on a small machine. The first rebuild queued reads the
bindings as they are when it runs, so the others add nothing. Textual also asks again, after the
next frame, for every focus change: by then the keys are those already shown, and building the
same widgets again would cost another layout of the screen.

A key is shown whole or not at all: Textual's footer clips the last key that does not fit
(`Enter P` for `Enter Process`); here the keys past the room left of the palette's are hidden, F1
listing every key.

The footer's own line (its background, under the keys) is drawn on every frame that changes any line of
the screen: docked, it is clipped to the screen, not to its row, and Textual's compositor draws every
widget whose clip the box of a frame's changed lines overlaps (its keys, clipped to the footer, are not).
Nothing refreshed it, so it gives the line it drew (``StillFrame``).
"""

from __future__ import annotations

from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from gputop.ui.widgets.still_frame import StillFrame


class KeyFooter(Footer, StillFrame):
    """A Footer whose rebuilds queued between two frames are one, and skipped when nothing changed; its
    line given as drawn while nothing refreshed it."""

    _rebuild_queued = False
    # What the last rebuild showed; None before the first, which Footer asks for once the bindings
    # are ready (the footer is composed empty at mount).
    _built: tuple[object, ...] | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._rebuild_queued and screen is self.screen:
            return  # the rebuild already queued will show the bindings as they are by then
        super().bindings_changed(screen)
        if not (self.is_attached and screen is self.screen):
            return
        # Footer queues a rebuild only while the app has the terminal's focus; a terminal that starts
        # unfocused (a browser tab through `gputop serve`, a tmux pane with focus events) would keep an
        # empty footer until focused. The keys act whether or not it has the focus: show them anyway.
        if not screen.app.app_focus:
            self.call_after_refresh(self.recompose)
        self._rebuild_queued = True

    def _shown(self) -> tuple[object, ...]:
        """Everything a rebuild would show: each active key's name, description, action and state."""
        bindings = tuple(
            (binding.key, self.app.get_key_display(binding), binding.description, binding.action,
             binding.group, binding.show, binding.tooltip, enabled, tooltip)
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
        )
        return (self.compact, self.show_command_palette, self.combine_groups, bindings)

    async def recompose(self) -> None:
        self._rebuild_queued = False
        if self.is_attached:
            shown = self._shown()
            if shown == self._built:
                return
            self._built = shown
        await super().recompose()
        self._fit_later()

    def on_resize(self, event: Resize) -> None:
        self._fit_later()

    def _fit_later(self) -> None:
        """Show every key again, and once they are laid out hide those that do not fit whole."""
        for child in self.children:
            child.display = True
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        palette: list[Widget] = [child for child in self.children if child.has_class("-command-palette")]
        right = palette[0].region.x if palette else self.region.right
        cut = False
        for child in self.children:
            if child in palette:
                continue
            cut = cut or child.region.right > right
            if cut:
                child.display = False
