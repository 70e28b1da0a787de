"""Sending signals to processes, safely: a process is named by (pid, create_time)."""

from __future__ import annotations

import enum
import signal as signal_module
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from gputop.core.host.permission import denied
from gputop.core.host.pidns import in_host_pid_namespace
from gputop.core.host.procfs import is_thread_of_another_process
from gputop.core.host.visibility import EXITED, PERMISSION, PID_NAMESPACE, why_not_visible
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


# The PID is in /proc now, but no start time came with the process as listed: which one it was is unknown.
UNREAD = "unread"


def _not_visible_reason(pid: int) -> str | None:
    """Why the process has no start time: the sampler's ``not_visible_reason``, read again now."""
    if pid > 0 and psutil.pid_exists(pid) and not is_thread_of_another_process(pid):
        return UNREAD
    return why_not_visible(pid, in_host_pid_namespace())


def not_visible_outcome(pid: int, reason: str | None) -> tuple[Outcome, str]:
    """Why a process without a start time is not signalled, for its ``not_visible_reason`` (or UNREAD).

    Without the start time a PID reused since NVML listed it could not be told apart, so no signal
    goes out; the words say what /proc showed, so the user knows whether to look elsewhere.
    """
    if reason == UNREAD:
        return Outcome.FAILED, (
            f"PID {pid} not signalled: no start time was read for it when it was listed, so gputop cannot check"
            f" that PID {pid} is still that process"
        )
    if reason == EXITED:
        return Outcome.GONE, f"PID {pid} has exited (no such process in /proc): nothing to signal"
    if reason == PID_NAMESPACE:
        return Outcome.FAILED, (
            f"PID {pid} not signalled: it is a host PID and gputop runs in another PID namespace (a container"
            f" without --pid=host), where PID {pid} is another process or none; signal it from the host"
        )
    if reason == PERMISSION:
        return Outcome.DENIED, (
            f"PID {pid} not signalled: /proc/{pid} cannot be read (permission denied: hidepid or a security"
            " module), so which process holds the PID now cannot be checked"
        )
    return Outcome.FAILED, (
        f"PID {pid} not signalled: /proc gives no start time for it and does not say why (exited, or hidden"
        " by hidepid), so which process holds the PID now cannot be checked"
    )


def send_signal(
    identity: ProcessIdentity,
    signal_number: int,
    not_visible_reason: Callable[[int], str | None] = _not_visible_reason,
) -> SignalResult:
    """Signal the process with this identity; never a process that now holds a reused PID.

    ``not_visible_reason`` says why a PID without a start time has none (core.host.visibility).
    """
    pid, started = identity
    name = signal_name(signal_number)

    def result(outcome: Outcome, message: str) -> SignalResult:
        return SignalResult(identity, name, outcome, message)

    if started is None:
        return result(*not_visible_outcome(pid, not_visible_reason(pid)))
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
        return result(Outcome.DENIED, f"{name} to PID {pid}: permission denied ({denied(pid, 'signal')})")
    except OSError as error:
        return result(Outcome.FAILED, f"{name} to PID {pid} failed: {error.strerror or error}")
    return result(Outcome.SENT, f"{name} sent to PID {pid}")

