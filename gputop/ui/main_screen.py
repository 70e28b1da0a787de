"""The main screen: the title bar, the host strip, the GPU cards, the process panel, the filter box, the
footer, and the notice that the terminal is too small; the main screen's own keys (``keymap``'s
``MAIN_SCREEN_BINDINGS``) and their actions.

Its widgets are made here; what they show comes from the app (``show_snapshot``). The keys of the process
panel are the panel's (``panel/process_panel.py``), those that act over every screen the app's: Textual's
focus chain finds each where it lives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Vertical
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Static

from gputop.core.model import Snapshot
from gputop.ui import keymap, layout
from gputop.ui.controls.layout_control import CardContents, DrawCards, LayoutControl
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.widgets.filter_bar import FilterBar
from gputop.ui.widgets.gpu_area import GpuArea
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.host_strip import HostStrip
from gputop.ui.widgets.key_footer import KeyFooter
from gputop.ui.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from textual.binding import BindingType

    from gputop.ui.controls.navigation import Navigation


class MainScreen(Screen[None]):
    """The GPUs and their processes; the screen under every other."""

    BINDINGS: ClassVar[list[BindingType]] = keymap.MAIN_SCREEN_BINDINGS
    AUTO_FOCUS = "#processes"  # the panel, where the keys act; Tab reaches the cards

    def __init__(
        self,
        *,
        title_bar: TitleBar,
        panel: ProcessPanel,
        filter_bar: FilterBar,
        size: Callable[[], Size],
        current: Callable[[], Snapshot | None],
        draw_cards: DrawCards,
        card_contents: CardContents,
        ready: Callable[[], None],
    ) -> None:
        """``size``: the terminal's; ``current``: the snapshot shown; ``draw_cards``: draws a snapshot's cards
        (the app's: it holds their history, forecasts and alerts); ``card_contents``: what each would show, its
        marks kept by the form the room picks; ``ready``: called once the widgets are
        mounted (the app then shows what it has). The parts behind the keys come with ``connect``, once
        the app has made them (some of them need this screen's widgets)."""
        super().__init__()
        self.title_bar, self.panel, self.filter_bar = title_bar, panel, filter_bar
        self.host = HostStrip()
        self.grid = GpuGrid(id="gpu-grid")
        self.area = GpuArea(self.grid, id="gpu-area")
        self.main = Vertical(title_bar, self.host, self.area, panel, filter_bar, id="main")
        self.too_small = Static(f"terminal too small (need {layout.MIN_WIDTH}x{layout.MIN_HEIGHT})", id="too-small")
        self.footer = KeyFooter()
        self.room = LayoutControl(
            main=self.main, footer=self.footer, too_small=self.too_small, area=self.area, panel=panel,
            host=self.host, size=size, current=current, draw_cards=lambda snapshot, plan: draw_cards(snapshot, plan),
            contents=card_contents,
        )
        self._navigation: Navigation | None = None
        self._save_settings: Callable[[], None] | None = None
        self._allows: Callable[[str], bool] = lambda _action: False
        self._ready = ready

    def connect(
        self,
        *,
        navigation: Navigation,
        save_settings: Callable[[], None],
        allows: Callable[[str], bool],
    ) -> None:
        """The parts the keys call; ``allows``: whether an action acts in this mode (read-only, replay)."""
        self._navigation = navigation
        self._save_settings, self._allows = save_settings, allows

    def compose(self) -> ComposeResult:
        yield self.main
        yield self.too_small
        yield self.footer

    def on_mount(self) -> None:
        # The panel has the keys people press first (sort, filter, kill). Textual's auto-focus waits for the
        # terminal's focus, which a browser tab (`gputop serve`) or an unfocused pane may never report.
        self.panel.focus()
        self._ready()

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
        if self._navigation is not None:
            self._navigation.owners()

    def action_save_settings(self) -> None:
        if self._save_settings is not None:
            self._save_settings()

    # -- the mouse -----------------------------------------------------------------------

    def on_process_panel_gpu_filtered(self, message: ProcessPanel.GpuFiltered) -> None:
        self.grid.mark_filtered(message.index)  # the card of the GPU the panel shows alone

    def on_gpu_card_selected(self, message: GpuCard.Selected) -> None:
        if self._navigation is not None:
            self._navigation.detail(message.index)
