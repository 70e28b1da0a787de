"""Which of the main screen's keys act now, and the help and palette made of them.

``keymap`` declares the keys and what each mode (read-only, replay) allows; this adds what the
screen on top and the focus allow: the footer shows what acts on the thing that has the focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import ModalScreen, Screen

from gputop.ui import keymap
from gputop.ui.widgets.filter_bar import FilterInput

if TYPE_CHECKING:
    from gputop.ui.app import GpuTopApp


class KeyControl:
    """Answers the app's ``check_action``, and lists the keys that act now for help and the palette."""

    def __init__(self, app: GpuTopApp) -> None:
        self.app = app

    def allows(self, action: str, screen: Screen[object] | None = None) -> bool:
        """Whether ``action`` acts now on ``screen`` (the screen on top; the palette asks for the
        one it was opened over): a dialog's own keys, the filter box's Enter and Esc, the process
        screen's keys; the main screen's only where they act."""
        app = self.app
        if not keymap.mode_allows(action, readonly=app.readonly, replaying=app.replay is not None):
            return False
        screen = app.screen if screen is None else screen
        if isinstance(screen, ModalScreen):
            return action == "quit"
        if screen.id in ("process-screen", "owners-screen") and action not in keymap.PROCESS_SCREEN_ACTIONS:
            return False
        in_filter_box = isinstance(screen.focused, FilterInput)
        if in_filter_box and action not in keymap.FILTER_BOX_ACTIONS:
            return False
        if action == "clear_filter":
            return app.filter.active or app.filter_control.bar.display
        if action == "filter":
            # Only on the main screen, and "/" typed into the box is text (a regex may hold one).
            return screen is app.screen_stack[0] and not in_filter_box
        return True

    def help_entries(self) -> list[tuple[str, str]]:
        """(keys, description) for every key binding that is available now, and the keys that move."""
        bindings = keymap.key_bindings(self.app.BINDINGS)
        return [*keymap.help_entries(bindings, self.allows), *keymap.NAVIGATION_HELP]

    def palette_entries(self, screen: Screen[object]) -> list[tuple[str, str, str]]:
        """(description, keys, action) for each action the palette, opened over ``screen``, offers."""
        bindings = keymap.key_bindings(self.app.BINDINGS)
        return keymap.palette_entries(bindings, lambda action: self.allows(action, screen))
