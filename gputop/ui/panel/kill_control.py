"""Tagging and signalling processes: the tags, who the targets are, the confirmation, the signal, the
outcome, and the refusal where gputop sends no signals."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from gputop.core.format import safe_text
from gputop.core.host.signals import Outcome, SignalResult, send_signal
from gputop.core.model import ProcessIdentity
from gputop.ui.panel.rows import ProcessRow, launcher_note
from gputop.ui.widgets.process_table import ProcessTable

if TYPE_CHECKING:
    from gputop.ui.app import GpuTopApp


class KillControl:
    """Tags processes in the table the user looks at and signals them, off the UI thread."""

    def __init__(self, app: GpuTopApp) -> None:
        self.app = app

    def active_table(self) -> ProcessTable:
        """The process table the user is looking at: the detail screen's, or the main one."""
        focused = self.app.focused
        return focused if isinstance(focused, ProcessTable) else self.app.processes

    def toggle_tag(self) -> None:
        """Space: tag the selected process, or untag it."""
        self.active_table().toggle_tag()
        self.app.view.refresh()

    def untag_all(self) -> None:
        self.active_table().untag_all()
        self.app.view.refresh()

    def refuse(self) -> None:
        """k in read-only mode or a replay: say why nothing is sent."""
        why = "a recording" if self.app.replay is not None else "read-only (--readonly)"
        self.app.notify(f"{why}: gputop sends no signals", title="Not sent", severity="warning")

    def targets(self) -> list[ProcessRow]:
        """The tagged processes, or else the selected one (a ``(no process)`` row is none)."""
        table = self.active_table()
        tagged = table.tagged_rows()
        if tagged:
            return tagged
        row = table.cursor_row
        return [] if row is None or row.unattributed else [row]

    def ask(self) -> None:
        """Ask which signal to send to the targets (none selected: say so), then send it."""
        targets = self.targets()
        if not targets:
            row = self.active_table().cursor_row
            if row is not None and row.unattributed:
                self.app.notify(
                    "(no process) is not a process: memory no listed process holds; nothing to signal"
                    " (Enter shows its GPU's causes)", severity="warning",
                )
                return
            self.app.notify("no process selected", severity="warning")
            return
        if targets[0].launcher:
            self.ask_launcher(targets[0], self.below(targets[0]))
            return
        self.confirm(targets)

    def confirm(self, targets: list[ProcessRow]) -> None:
        """The signal dialog for ``targets``; each is signalled by its (pid, start time)."""
        from gputop.ui.screens.kill import KillScreen

        def chosen(signal_number: int | None) -> None:
            if signal_number is not None:
                # A process on two GPUs has a row on each: it is signalled once.
                self.send(list(dict.fromkeys(row.process.identity for row in targets)), signal_number)

        self.app.push_screen(KillScreen(targets), chosen)

    def below(self, row: ProcessRow) -> list[ProcessRow]:
        """The rows under ``row`` in the tree the user looks at (the lines that follow it, drawn deeper)."""
        rows = self.active_table().rows
        keys = [r.key for r in rows]
        if row.key not in keys:
            return []
        under = []
        for other in rows[keys.index(row.key) + 1 :]:
            if len(other.guide) <= len(row.guide):
                break
            under.append(other)
        return under

    def ask_launcher(self, launcher: ProcessRow, below: list[ProcessRow]) -> None:
        """k on a launcher: "the launcher" or "the launcher and its N workers", then the signal."""
        from gputop.ui.screens.kill import LauncherChoiceScreen

        if launcher.process.started is None:
            # Without its start time a reused PID could not be told apart: no signal on a guess.
            self.app.notify(launcher_note(launcher), severity="warning")
            return
        # Lines between it and its workers (a torchrun under a shell) go with them, if they can be named.
        below = [row for row in below if not row.launcher or row.process.started is not None]
        workers = len({row.process.identity for row in below if not row.launcher})

        def picked(choice: str | None) -> None:
            if choice == LauncherChoiceScreen.LAUNCHER:
                self.confirm([launcher])
            elif choice == LauncherChoiceScreen.WITH_WORKERS:
                self.confirm([launcher, *below])

        self.app.push_screen(LauncherChoiceScreen(launcher, workers), picked)

    def send(self, identities: list[ProcessIdentity], signal_number: int) -> None:
        """Signal each process (re-checked by pid and start time) in a worker thread."""
        self.app.run_worker(partial(self._send, identities, signal_number), thread=True, group="signals")

    def _send(self, identities: list[ProcessIdentity], signal_number: int) -> None:
        for identity in identities:
            result = self.app.sampler.source.signal(identity, signal_number)
            if result is None:
                result = send_signal(identity, signal_number)
            self.app.call_from_thread(self._report, result)

    def _report(self, result: SignalResult) -> None:
        app = self.app
        message = safe_text(result.message)  # it may name a process owner: shown, never acted on
        if result.outcome is Outcome.SENT:
            for table in (app.processes, self.active_table()):
                table.tagged = {key for key in table.tagged if key[:2] != result.identity}
            app.notify(message, title="Signal sent", markup=False)
        elif result.outcome is Outcome.GONE:
            app.notify(message, title="Already gone", severity="warning", markup=False)
        elif result.outcome is Outcome.REUSED:
            app.notify(f"refused: {message}", title="Refused (PID reused)", severity="error", markup=False)
        elif result.outcome is Outcome.DENIED:
            app.notify(message, title="Permission denied", severity="error", markup=False)
        else:
            app.notify(message, title="Signal failed", severity="error", markup=False)
