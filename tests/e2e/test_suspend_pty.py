"""Ctrl+Z as in a shell, htop or less: the real gputop in a pseudo-terminal (the main view and the cluster
view) gives the terminal back and stops; continued (the shell's fg), it draws its screen again, hears keys,
and quits as before."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

CTRL_Z = b"\x1a"
LEAVE_ALT_SCREEN = b"\x1b[?1049l"
ENTER_ALT_SCREEN = b"\x1b[?1049h"


def state(pid: int) -> str:
    """The process's state letter in /proc (T: stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def wait_state(pid: int, stopped: bool, terminal: PtyTerminal) -> None:
    deadline = time.monotonic() + 10.0
    while (state(pid) == "T") != stopped:
        assert time.monotonic() < deadline, f"state {state(pid)!r}; the screen was:\n{terminal.text()}"
        terminal.pump(0.05)


@pytest.fixture
def terminal(fake_nvml: FakeNvml) -> Iterator[PtyTerminal]:
    fake_nvml.write(Scenario().gpu(name="NVIDIA H100 80GB HBM3", memory_used=30 * GiB).process(gpu=0, pid=os.getpid(),
                                                                                              used=GiB))
    term = PtyTerminal([sys.executable, "-m", "gputop", "--interval", "0.5"], fake_nvml.env(), 100, 30)
    yield term
    term.close()


def stop_and_continue(terminal: PtyTerminal, screen_up: Callable[[str], bool]) -> None:
    """Ctrl+Z, then the shell's fg: the terminal as the shell needs it while stopped, the screen after."""
    terminal.type(CTRL_Z)
    wait_state(terminal.pid, True, terminal)
    terminal.pump(0.2)
    written = bytes(terminal.raw)
    stopped_at = len(written)
    # Out of the alternate screen, its cursor shown.
    assert written.rindex(LEAVE_ALT_SCREEN) > written.rindex(ENTER_ALT_SCREEN)
    assert written.rindex(b"\x1b[?25h") > written.rindex(b"\x1b[?25l")

    os.kill(terminal.pid, signal.SIGCONT)  # fg
    wait_state(terminal.pid, False, terminal)
    terminal.wait_for("the screen drawn again", screen_up)
    assert ENTER_ALT_SCREEN in bytes(terminal.raw)[stopped_at:]


def quits_cleanly(terminal: PtyTerminal) -> None:
    terminal.type(b"q")
    assert terminal.wait_exit() == 0
    assert b"Traceback" not in bytes(terminal.raw)


def test_ctrl_z_gives_the_terminal_back_and_fg_brings_the_screen_and_its_keys_back(terminal: PtyTerminal) -> None:
    def screen_up(screen: str) -> bool:
        return "F1 Help" in screen and f" {os.getpid()} " in screen

    terminal.wait_for("the full screen", screen_up)
    for _ in range(2):  # a second stop after the first resume, as a user goes back and forth
        stop_and_continue(terminal, screen_up)
        terminal.type(b"N")  # heard: the panel sorted by PID
        terminal.wait_for("the sort by PID", lambda s: "PID▲" in s)
        terminal.type(b"M")
        terminal.wait_for("the sort by GPU memory", lambda s: "GPU-MEM▼" in s)
    quits_cleanly(terminal)


def test_the_cluster_view_stops_on_ctrl_z_too(fake_nvml: FakeNvml) -> None:
    # No Prometheus at the address: the view says so and goes on (all this test needs of it).
    command = [sys.executable, "-m", "gputop", "cluster", "--prometheus", "http://127.0.0.1:9"]
    terminal = PtyTerminal(command, fake_nvml.env(), 100, 30)
    try:
        def screen_up(screen: str) -> bool:
            return "Prometheus unreachable" in screen and "q quit" in screen

        terminal.wait_for("the cluster view", screen_up)
        stop_and_continue(terminal, screen_up)
        terminal.type(b"/")  # heard: the filter's keys
        terminal.wait_for("the filter", lambda s: "keep the filter" in s)
        terminal.type(b"\x1b")
        terminal.wait_for("the filter cleared", lambda s: "q quit" in s)
        quits_cleanly(terminal)
    finally:
        terminal.close()
