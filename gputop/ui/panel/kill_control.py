"""Tagging and signalling processes: the tags, who the targets are, the confirmation, the signal, the
outcome, and the refusal where gputop sends no signals."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from gputop.core.format import safe_text
from gputop.core.host.signals import Outcome, SignalResult, send_signal
from gputop.core.model import ProcessIdentity
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.rows import ProcessRow
from gputop.ui.widgets.tree_rows import launcher_note

if TYPE_CHECKING:
    from textual.app import App

# The source's signal function: it signals the processes it simulates (a demo), and answers None for
# real ones, which gputop signals itself.
SignalFunction = Callable[[ProcessIdentity, int], SignalResult | None]


def signal_each(
    identities: list[ProcessIdentity], signal_number: int, signal: SignalFunction
) -> Iterator[SignalResult]:
    """Signal each process, through the source where it simulates them, else by (pid, start time) here."""
    for identity in identities:
        result = signal(identity, signal_number)
        yield send_signal(identity, signal_number) if result is None else result


@dataclass(frozen=True, slots=True)
class Notice:
    """What the user is told of one signal's outcome."""

    message: str
    title: str
    severity: Literal["information", "warning", "error"]


def outcome_notice(result: SignalResult) -> Notice:
    """The notice for ``result``; its message may name a process owner: shown, never acted on."""
    message = safe_text(result.message)
    if result.outcome is Outcome.SENT:
        return Notice(message=message, title="Signal sent", severity="information")
    if result.outcome is Outcome.GONE:
        return Notice(message=message, title="Already gone", severity="warning")
    if result.outcome is Outcome.REUSED:
        return Notice(message=f"refused: {message}", title="Refused (PID reused)", severity="error")
    if result.outcome is Outcome.DENIED:
        return Notice(message=message, title="Permission denied", severity="error")
    return Notice(message=message, title="Signal failed", severity="error")


def kill_notice(results: Sequence[SignalResult]) -> Notice:
    """One notice for a signal sent to several processes: who got it, then each refusal or failure in its
    own words; as grave as the worst outcome. One process: its own notice (``outcome_notice``)."""
    if len(results) == 1:
        return outcome_notice(results[0])
    notices = [outcome_notice(result) for result in results]
    sent = [result for result in results if result.outcome is Outcome.SENT]
    parts = []
    if sent:
        parts.append(_sent_to(sent))
    parts.extend(notice.message for notice, result in zip(notices, results, strict=True) if result not in sent)
    severity = max((notice.severity for notice in notices), key=_GRAVITY.index)
    title = f"Signal sent to {len(sent)} of {len(results)}"
    title = {len(results): "Signal sent", 0: "Signal not sent"}.get(len(sent), title)
    return Notice(message="; ".join(parts), title=title, severity=severity)


_GRAVITY = ("information", "warning", "error")


def _sent_to(sent: Sequence[SignalResult]) -> str:
    """The processes signalled, in one sentence where they were told alike ("SIGTERM sent to PIDs 7, 9")."""
    first = f"PID {sent[0].identity[0]}"
    words = safe_text(sent[0].message)
    alike = all(safe_text(result.message) == words.replace(first, f"PID {result.identity[0]}") for result in sent)
    if len(sent) > 1 and first in words and alike:
        return words.replace(first, "PIDs " + ", ".join(str(result.identity[0]) for result in sent))
    return "; ".join(safe_text(result.message) for result in sent)


def rows_below(rows: list[ProcessRow], row: ProcessRow) -> list[ProcessRow]:
    """The rows under ``row`` in a tree (the lines that follow it, drawn deeper); none if it is not there."""
    keys = [r.key for r in rows]
    if row.key not in keys:
        return []
    under = []
    for other in rows[keys.index(row.key) + 1 :]:
        if len(other.guide) <= len(row.guide):
            break
        under.append(other)
    return under


class KillControl:
    """Tags processes in a process table and signals them, off the UI thread.

    ``app`` only shows (notify, the dialogs) and runs the signals in a worker; ``signal`` is the source's;
    ``panel`` is the main screen's table (its tags are the table's own: Space and ``U``); ``refusal``: why no
    signal is sent in this mode (read-only, a replay), or None where signals are sent.
    """

    def __init__(
        self,
        app: App[Any],
        signal: SignalFunction,
        *,
        panel: ProcessTable,
        refusal: str | None,
        source_name: str = "nvml",
    ) -> None:
        self.app = app
        self.source_name = source_name  # demo, replay or a live source: what a launcher's line is made from
        self.signal = signal
        self.panel = panel
        self.refusal = refusal
        self._table = panel  # the table the last signal was asked from

    def asked(self, table: ProcessTable) -> None:
        """k (or F9) on ``table``: the signal dialog, or why none is sent in this mode."""
        if self.refusal is not None:
            self.refuse()
        else:
            self.ask(table)

    def refuse(self) -> None:
        """k in read-only mode or a replay: say why nothing is sent."""
        self.app.notify(f"{self.refusal}: gputop sends no signals", title="Not sent", severity="warning")

    @staticmethod
    def targets(table: ProcessTable) -> list[ProcessRow]:
        """The tagged processes, or else the selected one (a ``(no process)`` row is none)."""
        tagged = table.tagged_rows()
        if tagged:
            return tagged
        row = table.cursor_row
        return [] if row is None or row.unattributed else [row]

    def ask(self, table: ProcessTable) -> None:
        """Ask which signal to send to ``table``'s targets (none selected: say so), then send it."""
        self._table = table
        targets = self.targets(table)
        if not targets:
            row = table.cursor_row
            if row is not None and row.unattributed:
                self.app.notify(
                    "(no process) is not a process: memory no listed process holds; nothing to signal"
                    " (Enter shows its GPU's causes)", severity="warning",
                )
                return
            self.app.notify("no process selected", severity="warning")
            return
        if targets[0].launcher:
            self.ask_launcher(targets[0], rows_below(table.rows, targets[0]))
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

    def ask_launcher(self, launcher: ProcessRow, below: list[ProcessRow]) -> None:
        """k on a launcher: "the launcher" or "the launcher and its N workers", then the signal."""
        from gputop.ui.screens.kill import LauncherChoiceScreen

        if launcher.process.started is None:
            # Without its start time a reused PID could not be told apart: no signal on a guess.
            self.app.notify(launcher_note(launcher, self.source_name, signalling=True), severity="warning")
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
        results = list(signal_each(identities, signal_number, self.signal))
        self.app.call_from_thread(self._report, results)

    def _report(self, results: list[SignalResult]) -> None:
        """Untag the processes signalled; one message for them all."""
        sent = {result.identity for result in results if result.outcome is Outcome.SENT}
        for table in (self.panel, self._table):
            table.set_tags({key for key in table.tagged if key[:2] not in sent})
        notice = kill_notice(results)
        self.app.notify(notice.message, title=notice.title, severity=notice.severity, markup=False)
