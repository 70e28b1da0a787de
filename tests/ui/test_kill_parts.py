"""The kill control's parts, built without an app: who is signalled how, what the user is told, and
which tree rows go with a launcher."""

from __future__ import annotations

import subprocess
import sys

import psutil

from gputop.core.host.signals import Outcome, SignalResult
from gputop.core.model import ProcessIdentity
from gputop.ui.panel.kill_control import Notice, kill_notice, outcome_notice, rows_below, signal_each
from gputop.ui.widgets.rows import ProcessRow
from tests.ui.factory import NOW, proc

SIGTERM = 15


def test_the_source_signals_what_it_simulates_and_gputop_signals_the_rest_by_identity() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        real: ProcessIdentity = (child.pid, psutil.Process(child.pid).create_time())
        simulated: ProcessIdentity = (4242, NOW)
        asked: list[tuple[ProcessIdentity, int]] = []

        def source_signal(identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
            asked.append((identity, signal_number))
            if identity == simulated:
                return SignalResult(identity, "SIGTERM", Outcome.SENT, "simulated, ended")
            return None

        results = list(signal_each([simulated, real], SIGTERM, source_signal))

        assert asked == [(simulated, SIGTERM), (real, SIGTERM)]
        assert results == [
            SignalResult(simulated, "SIGTERM", Outcome.SENT, "simulated, ended"),
            SignalResult(real, "SIGTERM", Outcome.SENT, f"SIGTERM sent to PID {child.pid}"),
        ]
        assert child.wait(timeout=10) == -SIGTERM
    finally:
        child.kill()
        child.wait()


def test_a_process_whose_start_time_is_unknown_is_not_signalled() -> None:
    (result,) = signal_each([(1, None)], SIGTERM, lambda identity, number: None)

    assert result.outcome is Outcome.FAILED
    assert result.message == (
        "PID 1 not signalled: no start time was read for it when it was listed, so gputop cannot check that PID 1"
        " is still that process"
    )


def test_each_outcome_is_told_with_its_title_and_severity() -> None:
    def told(outcome: Outcome, message: str) -> Notice:
        return outcome_notice(SignalResult((7, NOW), "SIGTERM", outcome, message))

    assert told(Outcome.SENT, "SIGTERM sent to PID 7") == Notice(
        message="SIGTERM sent to PID 7", title="Signal sent", severity="information"
    )
    assert told(Outcome.GONE, "PID 7 is already gone") == Notice(
        message="PID 7 is already gone", title="Already gone", severity="warning"
    )
    assert told(Outcome.REUSED, "PID 7 now belongs to another process") == Notice(
        message="refused: PID 7 now belongs to another process", title="Refused (PID reused)", severity="error"
    )
    assert told(Outcome.DENIED, "owned by root") == Notice(
        message="owned by root", title="Permission denied", severity="error"
    )
    assert told(Outcome.FAILED, "no such signal") == Notice(
        message="no such signal", title="Signal failed", severity="error"
    )


def test_a_signal_to_several_processes_is_told_in_one_notice_as_grave_as_its_worst_outcome() -> None:
    def result(pid: int, outcome: Outcome, message: str) -> SignalResult:
        return SignalResult((pid, NOW), "SIGTERM", outcome, message)

    sent = [result(pid, Outcome.SENT, f"SIGTERM sent to PID {pid} (simulated)") for pid in (7, 8, 9)]
    assert kill_notice(sent) == Notice(
        message="SIGTERM sent to PIDs 7, 8, 9 (simulated)", title="Signal sent", severity="information"
    )
    gone = result(10, Outcome.GONE, "PID 10 is already gone")
    denied = result(11, Outcome.DENIED, "PID 11 is owned by root")
    assert kill_notice([sent[0], gone, sent[1], denied]) == Notice(
        message="SIGTERM sent to PIDs 7, 8 (simulated); PID 10 is already gone; PID 11 is owned by root",
        title="Signal sent to 2 of 4",
        severity="error",
    )
    assert kill_notice([gone, result(12, Outcome.GONE, "PID 12 is already gone")]) == Notice(
        message="PID 10 is already gone; PID 12 is already gone", title="Signal not sent", severity="warning"
    )
    # Told differently (one through the demo, one for real): each in its own words.
    real = result(13, Outcome.SENT, "SIGTERM sent to PID 13")
    assert kill_notice([sent[0], real]).message == "SIGTERM sent to PID 7 (simulated); SIGTERM sent to PID 13"
    # One process: its own notice.
    assert kill_notice([denied]) == outcome_notice(denied)


def test_rows_below_a_launcher_are_the_deeper_lines_that_follow_it() -> None:
    def row(pid: int, guide: str, *, launcher: bool = False) -> ProcessRow:
        return ProcessRow(process=proc(pid, 0, 1.0), gpu_memory_total=None, now=NOW, guide=guide, launcher=launcher)

    launcher = row(100, "", launcher=True)
    shell = row(101, "├─", launcher=True)
    worker = row(102, "│ └─")
    sibling = row(103, "└─")
    other = row(200, "")
    rows = [launcher, shell, worker, sibling, other]

    assert rows_below(rows, launcher) == [shell, worker, sibling]
    assert rows_below(rows, shell) == [worker]
    assert rows_below(rows, worker) == []
    assert rows_below(rows, other) == []
    assert rows_below([other], launcher) == []
