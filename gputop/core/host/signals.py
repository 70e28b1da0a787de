"""Sending signals to processes, safely: a process is named by (pid, create_time)."""

from __future__ import annotations

import enum
import signal as signal_module
from dataclasses import dataclass

import psutil

from gputop.core.host.procfs import is_thread_of_another_process
from gputop.core.model import ProcessIdentity

# A start time read twice can differ by rounding; anything more is another process.
_START_TOLERANCE_S = 0.05

SIGNALS: tuple[tuple[str, int], ...] = (
    ("SIGTERM", int(signal_module.SIGTERM)),
    ("SIGKILL", int(signal_module.SIGKILL)),
    ("SIGINT", int(signal_module.SIGINT)),
)


class Outcome(enum.Enum):
    SENT = "sent"
    GONE = "already gone"
    REUSED = "refused: PID reused"
    DENIED = "permission denied"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class SignalResult:
    """What happened when one process was signalled."""

    identity: ProcessIdentity
    signal_name: str
    outcome: Outcome
    message: str


def signal_name(signal_number: int) -> str:
    try:
        return signal_module.Signals(signal_number).name
    except ValueError:
        return f"signal {signal_number}"


def send_signal(identity: ProcessIdentity, signal_number: int) -> SignalResult:
    """Signal the process with this identity; never a process that now holds a reused PID."""
    pid, started = identity
    name = signal_name(signal_number)

    def result(outcome: Outcome, message: str) -> SignalResult:
        return SignalResult(identity, name, outcome, message)

    if started is None:
        return result(Outcome.FAILED, f"PID {pid}: not visible from here, its identity is unknown")
    try:
        process = psutil.Process(pid)
        if is_thread_of_another_process(pid) or abs(process.create_time() - started) > _START_TOLERANCE_S:
            return result(
                Outcome.REUSED,
                f"PID {pid} now belongs to another process: not signalled",
            )
        if process.status() == psutil.STATUS_ZOMBIE:
            return result(Outcome.GONE, f"PID {pid} has already exited (zombie)")
        process.send_signal(signal_number)
    except psutil.NoSuchProcess:
        return result(Outcome.GONE, f"PID {pid} is already gone")
    except (psutil.AccessDenied, PermissionError):
        owner = _owner(pid)
        return result(
            Outcome.DENIED,
            f"{name} to PID {pid}: permission denied (owned by {owner}; it takes {owner} or root)",
        )
    except OSError as error:
        return result(Outcome.FAILED, f"{name} to PID {pid} failed: {error.strerror or error}")
    return result(Outcome.SENT, f"{name} sent to PID {pid}")


def _owner(pid: int) -> str:
    try:
        return str(psutil.Process(pid).username())
    except (psutil.Error, KeyError):
        try:
            return f"uid {psutil.Process(pid).uids().real}"
        except psutil.Error:
            return "another user"
