"""The main screen's room, seen from the app: the terminal too small, compact or full cards, the
process panel and the host strip shown or hidden. The arithmetic is ``layout``'s; this applies it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer

from gputop.core.model import Snapshot
from gputop.ui import layout
from gputop.ui.widgets.card_lines import CardContent
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.host_strip import HostStrip

if TYPE_CHECKING:
    from gputop.ui.app import GpuTopApp


class LayoutControl:
    """Lays the cards out for the terminal's size and the parts shown, and toggles those parts."""

    def __init__(self, app: GpuTopApp) -> None:
        self.app = app
        # True or False: the user chose compact or full cards (c, the settings), held through resizes;
        # None: gputop picks by the room (layout.needs_compact).
        self.compact_choice: bool | None = None
        # The size the last Resize said: while its handlers run, app.size still gives the old one.
        self._size: tuple[int, int] | None = None
        # Whether the cards are compact now: they unfold with a margin, except after a resize.
        self._shown_compact = False

    def resized(self, width: int, height: int) -> None:
        """A terminal of this size: "too small" below the minimum, else the cards laid out again."""
        app = self.app
        self._size = (width, height)
        self._shown_compact = False  # a new size: the form is picked afresh
        too_small = layout.too_small(width, height)
        app.query_one("#main").display = not too_small
        app.query_one(Footer).display = not too_small
        app.query_one("#too-small").display = too_small
        if app.snapshot is not None:
            self.show_gpus(app.snapshot)

    def plan(self, snapshot: Snapshot, compact_choice: bool | None = None) -> layout.CardLayout:
        app = self.app
        forecasts, diagnoses = app.forecasts, app.diagnoses
        # What each card warns of: a form that would cut a warning is not picked by itself.
        contents = [
            CardContent(
                gpu,
                forecast=None if forecasts is None else forecasts.gpus.get(gpu.index),
                alert_kinds=app.alert_kinds(gpu.index),
                diagnosis=None if diagnoses is None else diagnoses.gpus.get(gpu.index),
                now=snapshot.timestamp,
            )
            for gpu in snapshot.gpus
        ]
        width, height = self._size or (app.size.width, app.size.height)
        return layout.plan_cards(
            snapshot.gpus,
            width,
            height,
            compact_choice=compact_choice,
            process_rows=sum(1 for gpu in snapshot.gpus for _ in gpu.all_processes()),
            panel_shown=bool(app.processes.display),
            host_shown=bool(app.query_one(HostStrip).display),
            contents=contents,
            shown_compact=self._shown_compact,
        )

    def show_gpus(self, snapshot: Snapshot) -> None:
        """The cards of ``snapshot``, in the room the panel and the host strip leave them."""
        app = self.app
        plan = self.plan(snapshot, self.compact_choice)
        self._shown_compact = plan.compact
        area = app.query_one("#gpu-area")
        area.set_class(plan.compact, "-compact")
        panel_shown, host_shown = bool(app.processes.display), bool(app.query_one(HostStrip).display)
        height = self._size[1] if self._size else app.size.height
        room = layout.cards_room(height, panel_shown=panel_shown, host_shown=host_shown)
        if area.styles.max_height is None or area.styles.max_height.value != room:
            area.styles.max_height = room
        app.query_one(GpuGrid).show(snapshot, plan, app.history, app.forecasts, app.alert_kinds, app.diagnoses)

    def toggle_compact(self) -> None:
        """c: compact cards if they are full now, full ones if compact; held until ``c`` again, which
        gives the choice back to gputop when it lands on the form gputop picks by itself."""
        snapshot = self.app.snapshot
        if snapshot is None:
            self.compact_choice = True
            return
        shown = self.plan(snapshot, self.compact_choice).compact
        self.compact_choice = layout.toggled_choice(shown, self.plan(snapshot).compact)
        self.show_gpus(snapshot)

    def toggle_processes(self) -> None:
        """p: hide or show the process panel; the cards take its room (full cards if they now fit)."""
        table = self.app.processes
        table.display = not table.display
        self._again()

    def toggle_host(self) -> None:
        """s: hide or show the host strip."""
        strip = self.app.query_one(HostStrip)
        strip.display = not strip.display
        self._again()

    def _again(self) -> None:
        if self.app.snapshot is not None:
            self.show_gpus(self.app.snapshot)
