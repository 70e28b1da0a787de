"""The main screen's room: the terminal too small, compact or full cards, the process panel and the host
strip shown or hidden. The arithmetic is ``layout``'s; this applies it to the main screen's widgets."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.geometry import Size
from textual.widget import Widget

from gputop.core.model import Snapshot
from gputop.ui import layout
from gputop.ui.widgets.card_lines import CardContent

# Draws the cards of a snapshot as planned (the app's: it holds the history, forecasts and alerts).
DrawCards = Callable[[Snapshot, layout.CardLayout], None]
# What each card of a snapshot shows (its forecast, alerts and diagnosis): the marks a form must keep.
CardContents = Callable[[Snapshot], Sequence[CardContent]]


class LayoutControl:
    """Lays the cards out for the terminal's size and the parts shown, and toggles those parts.

    Given the widgets it shows, hides or sizes: ``main`` (all but the footer), ``footer``, ``too_small`` (the
    notice), ``area`` (the cards' scrolling area), ``panel`` and ``host``; ``size``: the terminal's;
    ``current``: the snapshot shown; ``draw_cards``: the grid's drawing of a snapshot's cards;
    ``contents``: what each card would show (a form that cuts a card's warning is not picked by itself).
    """

    def __init__(
        self,
        *,
        main: Widget,
        footer: Widget,
        too_small: Widget,
        area: Widget,
        panel: Widget,
        host: Widget,
        size: Callable[[], Size],
        current: Callable[[], Snapshot | None],
        draw_cards: DrawCards,
        contents: CardContents = lambda _snapshot: (),
    ) -> None:
        self.main, self.footer, self.too_small, self.area = main, footer, too_small, area
        self.panel, self.host = panel, host
        self.size, self.current, self.draw_cards, self.contents = size, current, draw_cards, contents
        # True or False: the user chose compact or full cards (c, the settings), held through resizes;
        # None: gputop picks by the room (layout.needs_compact).
        self.compact_choice: bool | None = None
        # The size the last Resize said: while its handlers run, the app's size still gives the old one.
        self._size: tuple[int, int] | None = None
        # Whether the cards are compact now: they unfold with a margin, except after a resize.
        self._shown_compact = False

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

    def plan(self, snapshot: Snapshot, compact_choice: bool | None = None) -> layout.CardLayout:
        width, height = self._terminal()
        return layout.plan_cards(
            snapshot.gpus,
            width,
            height,
            compact_choice=compact_choice,
            process_rows=sum(1 for gpu in snapshot.gpus for _ in gpu.all_processes()),
            panel_shown=bool(self.panel.display),
            host_shown=bool(self.host.display),
            contents=self.contents(snapshot),
            shown_compact=self._shown_compact,
        )

    def show_gpus(self, snapshot: Snapshot) -> None:
        """The cards of ``snapshot``, in the room the panel and the host strip leave them."""
        plan = self.plan(snapshot, self.compact_choice)
        self._shown_compact = plan.compact
        area = self.area
        area.set_class(plan.compact, "-compact")
        room = layout.cards_room(
            self._terminal()[1], panel_shown=bool(self.panel.display), host_shown=bool(self.host.display),
            gpu_count=len(snapshot.gpus),
        )
        if area.styles.max_height is None or area.styles.max_height.value != room:
            area.styles.max_height = room
        self.draw_cards(snapshot, plan)

    def toggle_compact(self) -> None:
        """c: compact cards if they are full now, full ones if compact; held until ``c`` again, which
        gives the choice back to gputop when it lands on the form gputop picks by itself."""
        snapshot = self.current()
        if snapshot is None:
            self.compact_choice = True
            return
        shown = self.plan(snapshot, self.compact_choice).compact
        self.compact_choice = layout.toggled_choice(shown, self.plan(snapshot).compact)
        self.show_gpus(snapshot)

    def toggle_processes(self) -> None:
        """p: hide or show the process panel; the cards take its room (full cards if they now fit)."""
        self.panel.display = not self.panel.display
        self._again()

    def toggle_host(self) -> None:
        """s: hide or show the host strip."""
        self.host.display = not self.host.display
        self._again()

    def _again(self) -> None:
        snapshot = self.current()
        if snapshot is not None:
            self.show_gpus(snapshot)
