"""Which screen opens over the main one: help, the alert log, the owners, a process in full, a GPU in detail.

The screens are imported when first opened: none of them is needed for the first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gputop.ui.panel.kill_control import rows_below
from gputop.ui.widgets.tree_rows import launcher_note

if TYPE_CHECKING:
    from textual.app import App

    from gputop.core.analysis.alerts import AlertEvent
    from gputop.core.analysis.tick_feed import Tick
    from gputop.ui.panel.process_panel import ProcessPanel
    from gputop.ui.screens.live_data import LiveData
    from gputop.ui.screens.process import ProcessKillParts
    from gputop.ui.widgets.process_table import ProcessTable


class Navigation:
    """Opens the screens the keys (and a click on a card) ask for."""

    def __init__(
        self,
        app: App[Any],
        *,
        alert_events: Callable[[], tuple[AlertEvent, ...]],
        help_entries: Callable[[], list[tuple[str, str]]],
        data: LiveData,
        kill: ProcessKillParts,
        panel: ProcessPanel,
        source_name: str = "nvml",
    ) -> None:
        """``app`` only opens screens and tells; ``alert_events``: the alert log's events now (a replay's
        jump starts a new log); ``data``: what the screens read besides the ticks (the series...); ``kill``:
        what a process screen's k calls; ``panel``: its order (the detail's table starts in it) and its
        filter (the owner screen's Enter). The app hands it each tick it shows (``tick``): a screen opens on it."""
        self.app = app
        self.source_name = source_name  # demo, replay or a live source: what a launcher's line is made from
        self.alert_events = alert_events
        self.help_entries = help_entries
        self.data = data
        self.kill = kill
        self.panel = panel
        self.tick: Tick | None = None  # the tick on screen (None before the first)

    def help(self) -> None:
        from gputop.ui.screens.help import HelpScreen
        from gputop.ui.widgets.host_strip import net_note

        host = None if self.tick is None else self.tick.snapshot.host
        self.app.push_screen(HelpScreen(self.help_entries(), (net_note(host),)))

    def alert_log(self) -> None:
        from gputop.ui.screens.alert_log import AlertLogScreen

        self.app.push_screen(AlertLogScreen(self.alert_events()))

    def owners(self) -> None:
        """o: who holds the GPUs; Enter there shows the chosen owner's processes in the panel."""
        from gputop.ui.screens.owners import OwnerScreen

        self.app.push_screen(OwnerScreen(self.tick, self.panel.only_owner))

    def process(self, table: ProcessTable) -> None:
        """Enter: the process selected in ``table`` in full."""
        from gputop.ui.screens.process import ProcessScreen

        row = table.cursor_row
        if row is not None and row.unattributed:  # not a process: its GPU's detail says where the memory went
            self.detail(row.process.gpu_index)
            return
        if row is None or (row.launcher and row.process.started is None):
            note = "no process selected" if row is None else launcher_note(row, self.source_name)
            self.app.notify(note, severity="warning")
            return
        # A launcher is on no GPU: its own process screen, with its workers for k.
        launcher, below = (row, rows_below(table.rows, row)) if row.launcher else (None, None)
        self.app.push_screen(ProcessScreen(
            row.process.identity, data=self.data, tick=self.tick, kill=self.kill, gpu_detail=self.detail,
            launcher=launcher, below=below,
        ))

    def detail(self, index: int) -> None:
        """GPU ``index`` in detail."""
        from gputop.ui.screens.detail import DetailScreen

        self.app.push_screen(DetailScreen(index, self.data, self.tick, self.panel.sort))
