"""The main screen's room: the terminal too small, compact or full cards, the process panel and the host
strip shown or hidden. The arithmetic is ``layout``'s; this applies it to the main screen's widgets, with
the cards' contents the screen built for the tick (kept, so that a resize or a key lays the same out again)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.geometry import Size
from textual.widget import Widget

from gputop.ui import layout
from gputop.ui.widgets.card_lines import CardContent
from gputop.ui.widgets.gpu_grid import GpuGrid


class LayoutControl:
    """Lays the cards out for the terminal's size and the parts shown, and toggles those parts.

    Given the widgets it shows, hides or sizes: ``main`` (all but the footer), ``footer``, ``too_small`` (the
    notice), ``area`` (the cards' scrolling area), ``grid`` (the cards), ``panel`` and ``host``; ``size``:
    the terminal's. A form that cuts a card's warning is not picked by itself (``layout.needs_compact``).
    """

    def __init__(
        self,
        *,
        main: Widget,
        footer: Widget,
        too_small: Widget,
        area: Widget,
        grid: GpuGrid,
        panel: Widget,
        host: Widget,
        size: Callable[[], Size],
    ) -> None:
        self.main, self.footer, self.too_small, self.area, self.grid = main, footer, too_small, area, grid
        self.panel, self.host, self.size = panel, host, size
        # True or False: the user chose compact or full cards (c, the settings), held through resizes;
        # None: gputop picks by the room (layout.needs_compact).
        self.compact_choice: bool | None = None
        # The size the last Resize said: while its handlers run, the app's size still gives the old one.
        self._size: tuple[int, int] | None = None
        # Whether the cards are compact now: they unfold with a margin, except after a resize.
        self._shown_compact = False
        # The cards shown (None: no tick yet), and the process rows under them.
        self._contents: Sequence[CardContent] | None = None
        self._process_rows = 0
        # The last plan and what it was planned from: contents that compare equal (the card would show
        # the same) in the same room give the same plan, which a still tick then need not work out again.
        self._planned: tuple[object, layout.CardLayout] | None = None
        self._planned_contents: tuple[CardContent, ...] = ()  # those it was planned from

    def resized(self, width: int, height: int) -> None:
        """A terminal of this size: "too small" below the minimum, else the cards laid out again."""
        self._size = (width, height)
        self._shown_compact = False  # a new size: the form is picked afresh
        too_small = layout.too_small(width, height)
        self.main.display = not too_small
        self.footer.display = not too_small
        self.too_small.display = too_small
        self._again()

    def _terminal(self) -> tuple[int, int]:
        if self._size is not None:
            return self._size
        size = self.size()
        return size.width, size.height

    def plan(self, contents: Sequence[CardContent], compact_choice: bool | None = None) -> layout.CardLayout:
        width, height = self._terminal()
        panel_shown, host_shown = bool(self.panel.display), bool(self.host.display)
        planned_from = (
            tuple(contents), width, height, compact_choice, self._process_rows, panel_shown, host_shown,
            self._shown_compact,
        )
        if self._planned is not None and self._planned[0] == planned_from:
            return self._planned[1]
        self._planned_contents = planned_from[0]
        plan = layout.plan_cards(
            [content.gpu for content in contents],
            width,
            height,
            compact_choice=compact_choice,
            process_rows=self._process_rows,
            panel_shown=panel_shown,
            host_shown=host_shown,
            contents=contents,
            shown_compact=self._shown_compact,
        )
        self._planned = (planned_from, plan)
        return plan

    def show_cards(self, contents: Sequence[CardContent], process_rows: int) -> None:
        """The cards of a tick (what each shows), in the room the panel of ``process_rows`` rows and the host
        strip leave them."""
        self._process_rows = process_rows
        plan = self.plan(contents, self.compact_choice)
        # The contents planned from, equal to these (compared whole, once, by ``plan``): where they are those
        # shown last, the very objects are shown again, which each card knows by identity without comparing.
        self._contents = contents = self._planned_contents
        self._shown_compact = plan.compact
        area = self.area
        area.set_class(plan.compact, "-compact")
        room = layout.cards_room(
            self._terminal()[1], panel_shown=bool(self.panel.display), host_shown=bool(self.host.display),
            gpu_count=len(contents),
        )
        if area.styles.max_height is None or area.styles.max_height.value != room:
            area.styles.max_height = room
        self.grid.show(contents, plan)

    def toggle_compact(self) -> None:
        """c: compact cards if they are full now, full ones if compact; held until ``c`` again, which
        gives the choice back to gputop when it lands on the form gputop picks by itself."""
        contents = self._contents
        if contents is None:
            self.compact_choice = True
            return
        shown = self.plan(contents, self.compact_choice).compact
        self.compact_choice = layout.toggled_choice(shown, self.plan(contents).compact)
        self.show_cards(contents, self._process_rows)

    def toggle_processes(self) -> None:
        """p: hide or show the process panel; the cards take its room (full cards if they now fit)."""
        self.panel.display = not self.panel.display
        self._again()

    def toggle_host(self) -> None:
        """s: hide or show the host strip."""
        self.host.display = not self.host.display
        self._again()

    def _again(self) -> None:
        if self._contents is not None:
            self.show_cards(self._contents, self._process_rows)
