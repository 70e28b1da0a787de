"""Which screen opens over the main one: help, the alert log, a process in full, a GPU in detail.

The screens are imported when first opened: none of them is needed for the first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gputop.ui.panel.rows import launcher_note

if TYPE_CHECKING:
    from gputop.core.analysis.alerts import AlertEvent
    from gputop.ui.app import GpuTopApp


class Navigation:
    """Opens the screens the keys (and a click on a card) ask for."""

    def __init__(self, app: GpuTopApp, alert_events: Callable[[], tuple[AlertEvent, ...]]) -> None:
        """``alert_events``: the alert log's events now (a replay's jump starts a new log)."""
        self.app = app
        self.alert_events = alert_events

    def help(self) -> None:
        from gputop.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.app.key_control.help_entries()))

    def alert_log(self) -> None:
        from gputop.ui.screens.alert_log import AlertLogScreen

        self.app.push_screen(AlertLogScreen(self.alert_events()))

    def owners(self) -> None:
        """o: who holds the GPUs; Enter there shows the chosen owner's processes in the panel."""
        from gputop.ui.screens.owners import OwnerScreen

        app = self.app
        self.app.push_screen(OwnerScreen(app.snapshot, lambda: app.diagnoses, app.filter_control.only_owner))

    def process(self) -> None:
        """Enter: the selected process in full (in the table the user looks at)."""
        from gputop.ui.screens.process import ProcessScreen

        control = self.app.kill_control
        row = control.active_table().cursor_row
        if row is not None and row.unattributed:  # not a process: its GPU's detail says where the memory went
            self.detail(row.process.gpu_index)
            return
        if row is None or (row.launcher and row.process.started is None):
            note = "no process selected" if row is None else launcher_note(row, self.app.sampler.source.name)
            self.app.notify(note, severity="warning")
            return
        if row.launcher:  # not on a GPU: its own process screen, with its workers for k
            self.app.push_screen(ProcessScreen(row.process.identity, launcher=row, below=control.below(row)))
            return
        self.app.push_screen(ProcessScreen(row.process.identity))

    def detail_of_selected(self) -> None:
        """g: the detail screen of the selected process's GPU."""
        row = self.app.processes.cursor_row
        if row is None:
            self.app.notify("no process selected", severity="warning")
            return
        self.detail(row.process.gpu_index)

    def detail(self, index: int) -> None:
        """GPU ``index`` in detail."""
        from gputop.ui.screens.detail import DetailScreen

        self.app.push_screen(DetailScreen(index))
