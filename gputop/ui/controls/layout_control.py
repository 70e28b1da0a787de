"""The main screen's room: the terminal too small, compact or full cards, the process panel and the host
strip shown or hidden. The arithmetic is ``layout``'s; this applies it to the main screen's widgets."""

from __future__ import annotations

from collections.abc import Callable

from textual.geometry import Size
from textual.widget import Widget

from gputop.core.model import Snapshot
from gputop.ui import layout

# Draws the cards of a snapshot as planned (the app's: it holds the history, forecasts and alerts).
DrawCards = Callable[[Snapshot, layout.CardLayout], None]


class LayoutControl:
    """Lays the cards out for the terminal's size and the parts shown, and toggles those parts.

    Given the widgets it shows, hides or sizes: ``main`` (all but the footer), ``footer``, ``too_small`` (the
    notice), ``area`` (the cards' scrolling area), ``panel`` and ``host``; ``size``: the terminal's;
    ``current``: the snapshot shown; ``draw_cards``: the grid's drawing of a snapshot's cards.
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
    ) -> None:
        self.main, self.footer, self.too_small, self.area = main, footer, too_small, area
        self.panel, self.host = panel, host
        self.size, self.current, self.draw_cards = size, current, draw_cards
        # True or False: the user chose compact or full cards (c, the settings); None: whatever fits.
        self.compact_choice: bool | None = None

    def resized(self, width: int, height: int) -> None:
        """A terminal of this size: "too small" below the minimum, else the cards laid out again."""
        too_small = layout.too_small(width, height)
        self.main.display = not too_small
        self.footer.display = not too_small
        self.too_small.display = too_small
        self._again()

    def plan(self, snapshot: Snapshot) -> layout.CardLayout:
        size = self.size()
        return layout.plan_cards(
            snapshot.gpus,
            size.width,
            size.height,
            compact_choice=self.compact_choice,
            process_rows=sum(1 for gpu in snapshot.gpus for _ in gpu.all_processes()),
            panel_shown=bool(self.panel.display),
        )

    def show_gpus(self, snapshot: Snapshot) -> None:
        """The cards of ``snapshot``, in the room the panel and the host strip leave them."""
        plan = self.plan(snapshot)
        area = self.area
        area.set_class(plan.compact, "-compact")
        room = layout.cards_room(self.size().height, panel_shown=bool(self.panel.display),
                                 host_shown=bool(self.host.display))
        if area.styles.max_height is None or area.styles.max_height.value != room:
            area.styles.max_height = room
        self.draw_cards(snapshot, plan)

    def toggle_compact(self) -> None:
        """c: compact cards if they are full now, full ones if compact."""
        snapshot = self.current()
        self.compact_choice = not self.plan(snapshot).compact if snapshot else True
        if snapshot is not None:
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
