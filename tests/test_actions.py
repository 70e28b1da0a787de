"""Signals reach the process the user saw, and no other."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import psutil
import pytest

from gputop.core.host.signals import Outcome, send_signal


def identity(process: subprocess.Popen[bytes]) -> tuple[int, float]:
    return (process.pid, psutil.Process(process.pid).create_time())


def test_a_signal_is_sent_to_the_process_with_that_identity(sleeper: subprocess.Popen[bytes]) -> None:
    result = send_signal(identity(sleeper), signal.SIGTERM)
    assert (result.outcome, result.message) == (Outcome.SENT, f"SIGTERM sent to PID {sleeper.pid}")
    assert sleeper.wait(timeout=5) == -signal.SIGTERM


def test_a_reused_pid_is_refused_and_the_process_lives_on(sleeper: subprocess.Popen[bytes]) -> None:
    pid, started = identity(sleeper)
    result = send_signal((pid, started - 30), signal.SIGKILL)
    assert result.outcome is Outcome.REUSED
    assert result.message == f"PID {pid} now belongs to another process: not signalled"
    assert sleeper.poll() is None


def test_a_thread_id_is_refused_and_its_process_lives_on(
    threaded_process: tuple[subprocess.Popen[bytes], int],
) -> None:
    # kill() on a thread's ID signals its whole process: a PID from another namespace must never reach it.
    process, thread_id = threaded_process
    started = psutil.Process(thread_id).create_time()  # psutil answers for a thread's ID as for a process
    result = send_signal((thread_id, started), signal.SIGKILL)
    assert result.outcome is Outcome.REUSED
    assert result.message == f"PID {thread_id} now belongs to another process: not signalled"
    time.sleep(0.2)
    assert process.poll() is None


def test_a_process_already_gone_is_reported(sleeper: subprocess.Popen[bytes]) -> None:
    target = identity(sleeper)
    sleeper.kill()
    sleeper.wait()
    result = send_signal(target, signal.SIGTERM)
    assert (result.outcome, result.message) == (Outcome.GONE, f"PID {target[0]} is already gone")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_a_signal_the_user_may_not_send_names_the_owner() -> None:
    victim = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "600"])
    try:
        deadline = time.monotonic() + 10
        while psutil.Process(victim.pid).uids().real != 65534:  # setpriv drops to nobody, then execs
            assert time.monotonic() < deadline
            time.sleep(0.01)
        target = identity(victim)
        owner = psutil.Process(victim.pid).username()
        os.seteuid(1234)  # an ordinary user who owns neither process
        try:
            result = send_signal(target, signal.SIGTERM)
        finally:
            os.seteuid(0)
        assert result.outcome is Outcome.DENIED
        assert result.message == (
            f"SIGTERM to PID {victim.pid}: permission denied (owned by {owner}: only {owner} or root may signal it;"
            " gputop runs as uid 1234)"
        )
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
