"""Which keys exist in this mode, and the help and palette made of the keys that act now.

Each key lives where it acts (``keymap`` says where), so Textual's focus chain decides which act on the
screen on top; this adds only what the mode allows (read-only, replay), for every place's
``check_action``, and whether Esc has a filter to clear.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.binding import ActiveBinding
from textual.dom import DOMNode

from gputop.ui import keymap


class KeyControl:
    """Answers ``check_action`` for the mode, and lists the keys that act now for help and the palette."""

    def __init__(self, *, readonly: bool, replaying: bool, filter_shown: Callable[[], bool]) -> None:
        """``filter_shown``: whether a filter is applied or its box open (Esc then clears it)."""
        self.readonly = readonly
        self.replaying = replaying
        self.filter_shown = filter_shown

    def allows(self, action: str) -> bool:
        """Whether ``action`` acts in this mode (and Esc only with a filter to clear)."""
        if not keymap.mode_allows(action, readonly=self.readonly, replaying=self.replaying):
            return False
        if action == "clear_filter":
            return self.filter_shown()
        return True

    def help_entries(self) -> list[tuple[str, str]]:
        """(keys, description) for every key of the main screen that acts now, and the keys that move."""
        return [*keymap.help_entries(keymap.key_bindings(keymap.BINDINGS), self.allows), *keymap.NAVIGATION_HELP]

    def palette_entries(self, active: Iterable[ActiveBinding]) -> list[tuple[str, str, str, DOMNode]]:
        """(description, keys, action, where it runs) for each action the palette offers: those of the
        ``active`` keys (of the screen it was opened over) that act in this mode, with all their keys."""
        where = {binding.binding.action: binding.node for binding in active}
        bindings = [binding for binding in keymap.key_bindings(keymap.BINDINGS) if binding.action in where]
        return [
            (description, keys, action, where[action])
            for description, keys, action in keymap.palette_entries(bindings, self.allows)
        ]
