"""The main screen: the title bar, the host strip, the GPU cards, the process panel, the filter box, the
footer, and the notice that the terminal is too small; the main screen's own keys (``keymap``'s
``MAIN_SCREEN_BINDINGS``) and their actions.

The app hands it each tick (``show``) and it updates the widgets it composed: each card's content is built
once here, the room (``layout_control``) plans from those contents and the grid draws them. Nothing it
holds calls back into the app for data: the parts its keys use come with its constructor (made before
it); what it tells the app, it posts (``SaveSettings`` for ``S``: the settings file is the app's, it holds
the theme and the interval too), but for ``mounted``, called in its ``on_mount``: the app then applies the
settings and shows the tick it has before the first frame is painted (a message comes after a paint: that
frame said "no GPU processes" over a machine that has some). The keys of the process panel are the panel's
(``panel/process_panel.py``), those that act over every screen the app's: Textual's focus chain finds
each where it lives.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from gputop.core.analysis.history import History
from gputop.core.analysis.tick_feed import Tick
from gputop.ui import keymap, layout
from gputop.ui.controls.layout_control import LayoutControl
from gputop.ui.feed import alert_kinds
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.widgets.card_lines import CardContent
from gputop.ui.widgets.gpu_area import GpuArea
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.host_strip import HostStrip
from gputop.ui.widgets.key_footer import KeyFooter
from gputop.ui.widgets.still_frame import StillFrame
from gputop.ui.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from textual.binding import BindingType

    from gputop.ui.controls.navigation import Navigation


def card_contents(tick: Tick, history: History) -> list[CardContent]:
    """What each card of a tick shows: its GPU, history, forecasts (its own and its MIG devices'), the
    alerts raised on it, its diagnosis, and the tick's time."""
    snapshot, forecasts, diagnoses = tick.snapshot, tick.foresight.forecasts, tick.foresight.diagnoses
    return [
        CardContent(
            gpu,
            history=history.gpus.get(gpu.index),
            forecast=forecasts.gpus.get(gpu.index),
            mig_forecasts={mig: f for (index, mig), f in forecasts.migs.items() if index == gpu.index},
            alert_kinds=alert_kinds(tick, gpu.index),
            diagnosis=diagnoses.gpus.get(gpu.index),
            now=snapshot.timestamp,
        )
        for gpu in snapshot.gpus
    ]


class MainColumn(Vertical, StillFrame):
    """The main screen's column (all but the footer): the box of a frame's changed lines covers it from the
    host strip to the process panel, and its background, the same each tick, is given as drawn."""


class MainScreen(Screen[None], StillFrame):
    """The GPUs and their processes; the screen under every other. Its own lines (the background under its
    widgets, the same each tick, which the box of a frame's changed lines covers) are given as drawn."""

    BINDINGS: ClassVar[list[BindingType]] = keymap.MAIN_SCREEN_BINDINGS
    AUTO_FOCUS = "#processes"  # the panel, where the keys act; Tab reaches the cards

    class SaveSettings(Message):
        """S: the user asks for the view as it is now to be saved to the settings file."""

    def __init__(
        self,
        *,
        title_bar: TitleBar,
        panel: ProcessPanel,
        history: History,
        history_lock: AbstractContextManager[object],
        navigation: Navigation,
        allows: Callable[[str], bool],
        mounted: Callable[[], None],
    ) -> None:
        """``panel``: the process panel (with its filter box); ``history``: the cards' series, read under
        ``history_lock`` (the sampler thread adds to them); ``navigation``: what the keys and a click on a
        card open; ``allows``: whether an action acts in this mode (read-only, replay); ``mounted``: called once
        its widgets are mounted, before anything is painted (the app's start: it hands no data this way)."""
        super().__init__()
        self.title_bar, self.panel = title_bar, panel
        self.host = HostStrip()
        self.grid = GpuGrid(id="gpu-grid")
        self.area = GpuArea(self.grid, id="gpu-area")
        self.main = MainColumn(title_bar, self.host, self.area, panel, panel.filter_bar, id="main")
        self.too_small = Static(f"terminal too small (need {layout.MIN_WIDTH}x{layout.MIN_HEIGHT})", id="too-small")
        self.footer = KeyFooter()
        self.room = LayoutControl(
            main=self.main, footer=self.footer, too_small=self.too_small, area=self.area, grid=self.grid,
            panel=panel, host=self.host, size=lambda: self.app.size,
        )
        self._history, self._history_lock = history, history_lock
        self._navigation, self._allows, self._mounted = navigation, allows, mounted

    def show(self, tick: Tick) -> None:
        """Put a tick on screen: the cards (each content built once, laid out by it), the host strip, the panel."""
        snapshot, foresight = tick.snapshot, tick.foresight
        # The sampler thread adds to the history meanwhile: the cards read its series under its lock. (A
        # relayout outside a tick, on a resize or `c`, may find one series a tick ahead of another for a
        # frame; nothing can fail: the history replaces its dicts rather than changing them.)
        with self._history_lock:
            contents = card_contents(tick, self._history)
            self.room.show_cards(contents, sum(1 for gpu in snapshot.gpus for _ in gpu.all_processes()))
        self.host.show(snapshot.host, snapshot.gpus)
        self.panel.show(snapshot, foresight.forecasts.processes, foresight.diagnoses)

    def resized(self, width: int, height: int) -> None:
        """The terminal's new size (the app's Resize: this screen may be under another)."""
        self.room.resized(width, height)

    def compose(self) -> ComposeResult:
        yield self.main
        yield self.too_small
        yield self.footer

    def on_mount(self) -> None:
        # The panel has the keys people press first (sort, filter, kill). Textual's auto-focus waits for the
        # terminal's focus, which a browser tab (`gputop serve`) or an unfocused pane may never report.
        self.panel.focus()
        self._mounted()

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        # The panel's keys, the screen's and the app's, in the one order keymap declares them.
        return keymap.in_footer_order(super().active_bindings)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self._allows(action)

    # -- the keys ------------------------------------------------------------------------

    def action_clear_filter(self) -> None:
        self.panel.clear_filter()

    def action_toggle_compact(self) -> None:
        self.room.toggle_compact()

    def action_toggle_processes(self) -> None:
        self.room.toggle_processes()

    def action_toggle_host(self) -> None:
        self.room.toggle_host()

    def action_owners(self) -> None:
        self._navigation.owners()

    def action_save_settings(self) -> None:
        self.post_message(self.SaveSettings())

    # -- the mouse -----------------------------------------------------------------------

    def on_process_panel_gpu_filtered(self, message: ProcessPanel.GpuFiltered) -> None:
        self.grid.mark_filtered(message.index)  # the card of the GPU the panel shows alone

    def on_gpu_card_selected(self, message: GpuCard.Selected) -> None:
        self._navigation.detail(message.index)
