"""The processes above the GPU ones, read from /proc (core.host.ancestry), on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from gputop.core.host.ancestry import AncestryReader

LAUNCHER = "import subprocess, time\nsubprocess.Popen(['sleep', '600'])\ntime.sleep(600)\n"


def child_of(pid: int) -> int:
    deadline = time.monotonic() + 10
    while not psutil.Process(pid).children():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return psutil.Process(pid).children()[0].pid


def end(process: subprocess.Popen[bytes]) -> None:
    """End a process this test started and its child, by PID."""
    for child in psutil.Process(process.pid).children():
        child.kill()
    process.kill()
    process.wait()


def test_a_shell_is_the_session_the_walk_stops_at_with_what_is_above_it_named_on_its_line() -> None:
    shell = subprocess.Popen(["bash"], stdin=subprocess.PIPE)  # a shell reading its commands, no script
    assert shell.stdin is not None
    shell.stdin.write(b"sleep 600; exit 0\n")
    shell.stdin.flush()
    try:
        worker = child_of(shell.pid)
        found = AncestryReader().read([shell.pid], [worker])
        assert list(found) == [shell.pid]  # not this test above it: the session ends the walk
        session = found[shell.pid]
        assert session.session and session.name == "bash" and session.command == "bash"
        assert session.parent_pid == os.getpid() and session.uid == os.getuid()
        assert session.above[0] == psutil.Process().name()  # this test, nearest first, up to PID 1
        assert abs(session.started - psutil.Process(shell.pid).create_time()) < 0.05  # (pid, start): its identity
    finally:
        end(shell)


def test_a_bash_c_wrapper_is_a_launcher_not_a_session() -> None:
    wrapper = subprocess.Popen(["bash", "-c", "sleep 600; exit 0"])
    try:
        worker = child_of(wrapper.pid)
        found = AncestryReader().read([wrapper.pid], [worker])
        assert not found[wrapper.pid].session and found[wrapper.pid].command == "bash -c sleep 600; exit 0"
        assert os.getpid() in found  # the walk went on above it
    finally:
        end(wrapper)


def test_a_launcher_and_its_ancestors_are_read_up_to_a_session_or_pid_1() -> None:
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER])
    try:
        worker = child_of(launcher.pid)
        reader = AncestryReader()
        found = reader.read([launcher.pid], [worker])
        assert found[launcher.pid].parent_pid == os.getpid() and not found[launcher.pid].session
        assert os.getpid() in found  # the walk went on above the launcher
        top = list(found.values())[-1]  # the last one read: a session, or the one under PID 1
        assert top.session or top.parent_pid in (None, 1) or not psutil.pid_exists(top.parent_pid)
        # A GPU process ends a walk: it has its own line.
        assert list(reader.read([launcher.pid], [worker, os.getpid()])) == [launcher.pid]
    finally:
        end(launcher)
    # Gone: nothing is read for it, and nothing breaks.
    assert AncestryReader().read([launcher.pid], []) == {}
