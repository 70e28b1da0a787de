"""The hosts, one line each, drawn with the line API: only the lines on screen are ever built.

10,000 hosts cost what 100 do to scroll and to refresh: a refresh swaps the list and
repaints the screenful that shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click, Key
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gputop.core.cluster.model import ClusterHost
from gputop.ui.cluster.render import HEADER, host_cells, row_text

_CURSOR = Style(reverse=True)


class HostList(ScrollView, can_focus=True):
    """Hosts in the order given; the cursor follows its host across refreshes and sorts."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor(-10000000)", "First", show=False),
        Binding("end", "cursor(10000000)", "Last", show=False),
        Binding("enter", "open", "Host", show=False),
    ]

    class Opened(Message):
        """Enter (or a click on the selected row) on a host."""

        def __init__(self, hostname: str) -> None:
            super().__init__()
            self.hostname = hostname

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hosts: Sequence[ClusterHost] = ()
        self.history: Mapping[str, tuple[float | None, ...]] = {}
        self.cursor = 0
        self.now = 0.0
        self.answering = True
        self.pending: frozenset[str] = frozenset()  # figures the first refresh has not brought yet
        self.empty_message = "waiting for Prometheus…"
        # Each line as drawn, by all it is drawn from: a repaint (a key, focus moving, another
        # screen closing) rebuilds only the lines that changed.
        self._drawn: dict[tuple[object, ...], Strip] = {}
        # While set, keys go here first (the filter being typed); the list keeps the focus.
        self.typing_into: Callable[[Key], bool] | None = None

    # -- what the screen and tests read ---------------------------------------------------

    @property
    def selected(self) -> ClusterHost | None:
        return self.hosts[self.cursor] if 0 <= self.cursor < len(self.hosts) else None

    def _visible(self) -> Sequence[ClusterHost]:
        top = int(self.scroll_offset.y)
        return self.hosts[top : top + max(1, self.size.height - 1)]

    def on_screen(self) -> list[str]:
        """The hostnames of the lines now visible."""
        return [h.hostname for h in self._visible()]

    def shows_ages(self) -> bool:
        """Whether a line on screen shows an age (which changes every second): only those need repainting."""
        return not self.answering or any(h.state != "live" for h in self._visible())

    def line(self, index: int) -> Text:
        """Row ``index`` as drawn (without the cursor)."""
        return self._row(self.hosts[index])

    # -- updating ---------------------------------------------------------------------------

    def show(self, hosts: Sequence[ClusterHost], keep: str | None) -> None:
        """Show these hosts; the cursor stays on ``keep`` if it is still listed."""
        self.hosts = hosts
        index = next((i for i, h in enumerate(hosts) if h.hostname == keep), None) if keep is not None else None
        self.cursor = min(self.cursor if index is None else index, max(0, len(hosts) - 1))
        self.virtual_size = Size(self._width(), len(hosts) + 1)
        self._scroll_to_cursor()
        self.refresh()

    def _width(self) -> int:
        return HEADER.cell_len

    # -- keys and mouse -------------------------------------------------------------------

    def on_key(self, event: Key) -> None:
        if self.typing_into is not None and self.typing_into(event):
            # Typed into the filter: neither the list's keys nor the app's (q, M, …) act on it.
            event.stop()

    def action_cursor(self, step: int) -> None:
        if not self.hosts:
            return
        self.cursor = max(0, min(len(self.hosts) - 1, self.cursor + step))
        self._scroll_to_cursor()
        self.refresh()

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        rows = max(1, self.size.height - 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + rows:
            self.scroll_to(y=self.cursor - rows + 1, animate=False, immediate=True)

    def on_click(self, event: Click) -> None:
        index = int(self.scroll_offset.y) + event.y - 1
        if event.y < 1 or not 0 <= index < len(self.hosts):
            return
        if index == self.cursor and event.chain > 1:
            self.post_message(self.Opened(self.hosts[index].hostname))
        self.cursor = index
        self.refresh()

    def action_open(self) -> None:
        if (host := self.selected) is not None:
            self.post_message(self.Opened(host.hostname))

    # -- drawing --------------------------------------------------------------------------

    def _row(self, host: ClusterHost) -> Text:
        return row_text(host_cells(host, self.history.get(host.hostname), self.now, self.answering, self.pending))

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_size.width  # within the scrollbar: under it, a line's last cell is lost
        base = self.rich_style
        scroll_x = int(self.scroll_offset.x)
        if y == 0:
            return self._drawn_line(None, base).crop_extend(scroll_x, scroll_x + width, base)
        index = y - 1 + int(self.scroll_offset.y)
        if index >= len(self.hosts):
            if not self.hosts and y == 1:
                message = Segment(f"  {self.empty_message}", base + Style(dim=True, italic=True))
                return Strip([message]).crop_extend(0, width, base)
            return Strip.blank(width, base)
        return self._drawn_line(index, base).crop_extend(scroll_x, scroll_x + width, base)

    def _drawn_line(self, index: int | None, base: Style) -> Strip:
        """The header (``index`` None) or a host's line, whole; from the cache when nothing it shows changed."""
        host = None if index is None else self.hosts[index]
        key: tuple[object, ...] = (base,)
        if host is not None:
            # An age moves on every second: only a line that shows one depends on the clock.
            aged = not self.answering or host.state != "live"
            key = (base, host, self.history.get(host.hostname), int(self.now) if aged else None,
                   self.answering, self.pending, index == self.cursor)
        strip = self._drawn.get(key)
        if strip is None:
            if len(self._drawn) > 4 * max(40, self.size.height):
                self._drawn.clear()
            line = HEADER.copy() if host is None else self._row(host)
            if index is not None and index == self.cursor:
                line.stylize(_CURSOR)
            segments = [Segment(text, base + s if s else base) for text, s, _ in line.render(self.app.console)]
            strip = self._drawn[key] = Strip(segments)
        return strip
