"""The hostname filter: one line, always there, typed into while the host list keeps the focus.

Moving the focus to an input box and back made Textual restyle the list and lay out the
screen again on every open and close; typing here redraws this line and the list alone.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.events import Key
from textual.widgets import Static

from gputop.core.format import safe_text

PLACEHOLDER = Text("/ filter hostnames: text, or re:REGEX", style="dim")


def parse_filter(text: str) -> re.Pattern[str] | None:
    """The hostname filter: plain text matches anywhere, case-insensitively; ``re:`` starts a regex.

    Raises ``re.error`` for an invalid regex; None means no filter.
    """
    if text.startswith("re:"):
        expression = text[3:]
        return re.compile(expression) if expression else None
    if not text:
        return None
    return re.compile(re.escape(text), re.IGNORECASE)


class FilterBar(Static):
    """What is typed, the filter it makes (the last good one while a regex is being typed), and its error."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(PLACEHOLDER, id=id)
        self.text = ""
        self.pattern: re.Pattern[str] | None = None
        self.error: str | None = None
        self.typing = False

    def start(self) -> None:
        self.typing = True
        self._show()

    def clear(self) -> None:
        self.typing = False
        self.text, self.pattern, self.error = "", None, None
        self._show()

    def take(self, event: Key) -> tuple[bool, bool]:
        """A key while typing: whether it was the filter's, and whether the filter changed."""
        if event.key == "escape":
            changed = self.pattern is not None
            self.clear()
            return True, changed
        if event.key == "enter":
            self.typing = False
            self._show()
            return True, False
        if event.key == "backspace":
            return True, self._set(self.text[:-1])
        if event.is_printable and event.character is not None:
            return True, self._set(self.text + event.character)
        return False, False

    def _set(self, text: str) -> bool:
        self.text = text
        before = self.pattern
        try:
            self.pattern, self.error = parse_filter(text), None
        except re.error as error:
            self.error = f"invalid regex: {error}"  # the last good filter stays
        self._show()
        return self.pattern != before

    def _show(self) -> None:
        if not self.typing and not self.text:
            line = PLACEHOLDER
        else:
            line = Text.assemble(("filter: ", "bold"), safe_text(self.text, 60), ("▏" if self.typing else ""))
            if self.error is not None:
                line.append(f"  {self.error}", style="bold red")
        # One line, always: no layout to redo.
        self.update(line, layout=False)
