"""The filter box under the process panel, and the line that says why a filter is invalid."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static


class FilterInput(Input):
    """The filter box. Keys typed ahead over a slow link arrive together: Enter applies the
    filter at once, and keys that were queued here after the focus moved on follow the focus."""

    # Enter is handled in on_key, before any binding: this one puts it in the footer, beside Esc.
    BINDINGS = [Binding("enter", "apply", "Apply", key_display="Enter")]

    # The keys that leave the box or act while typing (Esc clears the filter, F10 and Ctrl+C quit); every
    # other key is the box's: the keys of the screen and the app (F1, !, Ctrl+P) act not while a filter is typed.
    LEAVING_KEYS = frozenset({"escape", "enter", "f10", "ctrl+c", "tab", "shift+tab"})

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return key not in self.LEAVING_KEYS

    def __init__(self, on_enter: Callable[[FilterInput], None], *, placeholder: str, id: str) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.on_enter = on_enter

    def on_key(self, event: events.Key) -> None:
        # Runs before Input's own key handler, which prevent_default() skips.
        if self.screen.focused is not self:  # has_focus lags: it waits for the Blur event
            event.stop()
            event.prevent_default()
            self.app.post_message(events.Key(event.key, event.character))
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self.on_enter(self)

    def action_apply(self) -> None:
        self.on_enter(self)


class FilterBar(Vertical):
    """The filter box and, under it, why its text is invalid (the whole message, wrapped); hidden
    until ``/`` opens it.

    ``apply_text`` filters by the box's text as it is typed and returns why the text is invalid
    (``None`` when it is fine); Enter applies it, hides the box and calls ``on_done``.
    """

    def __init__(self, apply_text: Callable[[str], str | None], on_done: Callable[[], None]) -> None:
        super().__init__(id="filter-bar")
        self.apply_text = apply_text
        self.on_done = on_done
        self.field = FilterInput(
            self.submit, placeholder="text, PID, user, container; re:REGEX; is:idle", id="filter-input"
        )

    def compose(self) -> ComposeResult:
        yield self.field
        yield Static("", id="filter-error")

    def open(self, text: str) -> None:
        """Show the box holding ``text`` and focus it."""
        self.display = True
        self.field.value = text
        # At once, not on the next idle: keys typed ahead ("/204" in one read) must reach the box.
        self.screen.set_focus(self.field)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.field:
            self._show_problem(self.apply_text(event.value))

    def submit(self, field: FilterInput) -> None:
        """Enter: apply the filter at once; a valid one closes the box."""
        problem = self.apply_text(field.value)
        self._show_problem(problem)
        if problem is None:
            self.display = False
            self.on_done()

    def _show_problem(self, problem: str | None) -> None:
        error = self.query_one("#filter-error", Static)
        error.update("" if problem is None else Text(problem, style="bold red"))
        error.display = problem is not None
        self.field.set_class(problem is not None, "-bad-filter")

    def clear(self) -> None:
        """Empty the box, forget its error and hide it."""
        self.field.value = ""
        self._show_problem(None)
        self.display = False
