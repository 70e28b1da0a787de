"""A process listed without a start time is never signalled, and the notice says why, from what /proc
shows of it (core.host.visibility's reasons): exited, another PID namespace, permission, or unknown."""

from __future__ import annotations

import signal
import subprocess

import pytest

from gputop.core.host.signals import Outcome, send_signal
from gputop.core.host.visibility import EXITED, PERMISSION, PID_NAMESPACE

PID = 4321


@pytest.mark.parametrize(
    ("reason", "outcome", "message"),
    [
        (EXITED, Outcome.GONE, f"PID {PID} has exited (no such process in /proc): nothing to signal"),
        (PID_NAMESPACE, Outcome.FAILED,
         f"PID {PID} not signalled: it is a host PID and gputop runs in another PID namespace (a container without"
         f" --pid=host), where PID {PID} is another process or none; signal it from the host"),
        (PERMISSION, Outcome.DENIED,
         f"PID {PID} not signalled: /proc/{PID} cannot be read (permission denied: hidepid or a security module),"
         " so which process holds the PID now cannot be checked"),
        (None, Outcome.FAILED,
         f"PID {PID} not signalled: /proc gives no start time for it and does not say why (exited, or hidden by"
         " hidepid), so which process holds the PID now cannot be checked"),
    ],
)
def test_each_reason_a_process_is_not_visible_is_told(reason: str | None, outcome: Outcome, message: str) -> None:
    asked: list[int] = []

    def why(pid: int) -> str | None:
        asked.append(pid)
        return reason

    result = send_signal((PID, None), signal.SIGTERM, why)
    assert (result.outcome, result.message) == (outcome, message)
    assert asked == [PID]


def test_a_pid_that_exists_now_but_was_listed_without_a_start_time_is_not_signalled() -> None:
    # The real reader: the PID is in /proc, but nothing says it is the process NVML listed.
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        result = send_signal((sleeper.pid, None), signal.SIGKILL)
        assert result.outcome is Outcome.FAILED
        assert result.message == (
            f"PID {sleeper.pid} not signalled: no start time was read for it when it was listed, so gputop cannot"
            f" check that PID {sleeper.pid} is still that process"
        )
        assert sleeper.poll() is None  # alive: no signal went out
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_pid_past_pid_max_has_exited_whatever_the_namespace() -> None:
    with open("/proc/sys/kernel/pid_max") as limit:
        past = int(limit.read())
    result = send_signal((past, None), signal.SIGTERM)
    assert (result.outcome, result.message) == (Outcome.GONE, f"PID {past} has exited (no such process in /proc): "
                                                               "nothing to signal")
