"""What a scrolling part of a screen leaves out of view, said where the user looks: a line under it
(``↓ 4 more (scroll): Utilization, Power, …``, ``↑ 2 above: …``; hidden while everything shows), or
the border of a box of facts (``↓ 3 more: Container, Directory, Parents``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static


def chart_name(title: str) -> str:
    """A chart's name without its unit: ``Memory used (GiB)`` is ``Memory used``."""
    return title.split(" (")[0]


def top_in(widget: Widget, container: Widget) -> int:
    """Where ``widget`` starts in ``container``'s scrolled content (its lines from the top)."""
    y = 0
    node: Widget | None = widget
    while node is not None and node is not container:
        y += node.virtual_region.y
        parent = node.parent
        node = parent if isinstance(parent, Widget) else None
    return y


def out_of_view(
    parts: Sequence[tuple[str, Widget]], container: Widget
) -> tuple[list[str], list[str]]:
    """(above, below): the names of ``parts`` (shown ones) with a line scrolled above ``container``'s
    view, and with a line below it."""
    first = container.scroll_offset.y
    last = first + container.scrollable_content_region.height
    above: list[str] = []
    below: list[str] = []
    for name, widget in parts:
        height = widget.outer_size.height
        if not widget.display or height <= 0:
            continue
        top = top_in(widget, container)
        if top + height > last:
            below.append(name)
        elif top < first:
            above.append(name)
    return above, below


def out_of_view_text(
    above: Sequence[str],
    below: Sequence[str],
    *,
    below_words: str = "↓ {count} more (scroll): {names}",
    above_words: str = "↑ {count} above: {names}",
) -> str:
    """``↓ 2 more (scroll): Power, Processes 2``, and ``↑ 1 above: Memory`` after it when scrolled down
    (in ``below_words`` and ``above_words``: ``{count}``, ``{names}``, and ``{s}`` for a plural)."""
    words = [
        form.format(count=len(names), names=", ".join(names), s="s" if len(names) > 1 else "")
        for form, names in ((below_words, below), (above_words, above))
        if names
    ]
    return "   ".join(words)


class OutOfView(Static):
    """Under a scrolling part of a screen, above its footer: what is out of view, else hidden."""

    DEFAULT_CSS = """
    OutOfView { height: 1; display: none; color: $text-warning; background: $panel; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._said = ""

    def tell(self, parts: Sequence[tuple[str, Widget]], container: Widget) -> bool:
        """Say what of ``parts`` (name, widget) is out of ``container``'s view (the wheel scrolls it, and
        the keys of a table in it bring the table into view); cut with ``…`` where it does not fit.
        True when that changed: showing or hiding this line changes the view, so ask again after the
        next refresh (it settles: a second change cannot undo the first)."""
        line = Text(out_of_view_text(*out_of_view(parts, container)))
        line.truncate(max(1, container.size.width), overflow="ellipsis")
        if line.plain == self._said and self.display == bool(line.plain):
            return False
        self._said = line.plain
        self.display = bool(line.plain)
        self.update(line)
        return True


def fact_starts(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(line, label) where each fact of a label / value table starts: a line that does not begin with
    a space (a wrapped value's next lines do); the label is what comes before two spaces."""
    return [(y, line.split("  ")[0].strip()) for y, line in enumerate(lines) if line[:1].strip()]


class FactsBox(VerticalScroll):
    """A scrolling box of label / value lines whose border says which facts are out of sight:
    ``↓ 4 more: Container, Directory, Parents, Devices``."""

    def __init__(self, *, id: str | None = None, content_id: str | None = None) -> None:  # noqa: A002
        """``content_id``: the id of the Static inside, which shows the facts."""
        super().__init__(Static(id=content_id), id=id)
        self._shown: RenderableType = ""
        self._starts: list[tuple[int, str]] = []

    def show(self, renderable: RenderableType) -> None:
        """Show ``renderable`` (a label / value table) and say what of it is out of sight."""
        self._shown = renderable
        self.query_one(Static).update(renderable)
        self._measure()

    def on_resize(self) -> None:
        self._measure()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._hint()

    def _measure(self) -> None:
        width = self.scrollable_content_region.width
        if not self.is_mounted or width <= 0:
            return
        console = self.app.console
        lines = console.render_lines(self._shown, console.options.update_width(width), pad=False)
        self._starts = fact_starts(["".join(segment.text for segment in line) for line in lines])
        self.call_after_refresh(self._hint)

    def _hint(self) -> None:
        first = round(self.scroll_y)
        last = first + self.scrollable_content_region.height
        below = [label for line, label in self._starts if line >= last]
        above = [label for line, label in self._starts if line < first]
        text = out_of_view_text(above, below)
        self.border_subtitle = text.replace("(scroll)", "(↓ scrolls)") or None
