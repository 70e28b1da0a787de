"""The real ``gputop`` command in tmux, against the fake NVML driver, killing a real process.

A user's session from end to end: the GPUs come up, ``N`` sorts by PID, ``/``
filters to one PID, ``k`` + Enter terminates that real process, the driver stops
listing it and its row goes, and ``q`` quits with status 0.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

# The tmux tests run on their own after the parallel run (README's test command): beside three
# busy xdist workers on a 2-core machine their screens came up wrong (80x24) or late.
pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install -y tmux)"),
    pytest.mark.serial,
]

COLUMNS, ROWS = 120, 40
TIMEOUT_S = 30.0


class Tmux:
    """One private tmux server (its own socket) running one command in a fixed-size window."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.socket = directory / "tmux.sock"
        self.config = directory / "tmux.conf"
        # The pane stays after the command exits, so its exit status can be read.
        self.config.write_text("set -g remain-on-exit on\nset -g default-terminal xterm-256color\n")
        self.env = env

    def run(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", str(self.config), *args],
            capture_output=True, text=True, timeout=10, env=self.env,
        )
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    @staticmethod
    def available() -> bool:
        return shutil.which("tmux") is not None

    def start(self, command: list[str], size: tuple[int, int] = (COLUMNS, ROWS)) -> None:
        columns, rows = size
        self.run("new-session", "-d", "-s", "e2e", "-x", str(columns), "-y", str(rows), shlex.join(command))

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "e2e")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", "e2e", *(["-l"] if literal else []), *keys)

    def pane(self, field: str) -> str:
        return self.run("display-message", "-p", "-t", "e2e", f"#{{{field}}}").strip()

    def wait_for(self, what: str, check: Callable[[str], bool]) -> str:
        """Poll the screen until ``check`` holds; fail with the last screen after TIMEOUT_S."""
        deadline = time.monotonic() + TIMEOUT_S
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")

    def exit_status(self) -> int:
        """The pane's command's exit status (negative: the signal that ended it), once it has ended.

        From tmux, or, while tmux (3.3a) has not reaped the command, from its zombie: a command that
        exits the moment its output ends can stay unreaped, its pane dead with no status.
        """
        pid = self.pane("pane_pid")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            status, signal = self.pane("pane_dead_status"), self.pane("pane_dead_signal")
            if status or signal:
                return int(status) if status else -int(signal)
            try:
                # Fields after the command name: the state is the first, the wait status the 50th.
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except FileNotFoundError:
                fields = []
            if fields and fields[0] == "Z":
                wait_status = int(fields[49])
                return -(wait_status & 0x7F) if wait_status & 0x7F else wait_status >> 8
            assert time.monotonic() < deadline, f"the command did not end; the screen was:\n{self.screen()}"
            time.sleep(0.05)

    def kill_server(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Three real processes with recognisable command lines: sleep 600, sleep 601, sleep 602."""
    processes = [subprocess.Popen(["sleep", str(600 + n)]) for n in range(3)]
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def machine(processes: list[subprocess.Popen[bytes]]) -> Scenario:
    """Two GPUs; the later a sleeper started, the more GPU memory it holds (so PID order is not memory order)."""
    scenario = (
        Scenario()
        .gpu(name="NVIDIA H100 80GB HBM3", util_gpu=80, memory_used=30 * GiB)
        .gpu(name="NVIDIA A100-SXM4-80GB", util_gpu=20, memory_used=8 * GiB)
    )
    ranked = sorted(processes, key=lambda p: p.pid)
    for rank, process in enumerate(ranked):
        scenario.process(gpu=rank % 2, pid=process.pid, used=(rank + 1) * 4 * GiB)
    return scenario


def row_pids(screen: str, pids: list[int]) -> list[int]:
    """The given PIDs in the order their process rows appear on screen."""
    found = []
    for line in screen.splitlines():
        for pid in pids:
            if re.search(rf"\s{pid}\s.*\bsleep 60\d", line):
                found.append(pid)
    return found


def filter_box_closed(screen: str, typed: str) -> bool:
    """The line above the footer is no longer the filter box, where ``typed`` was all (the panel has
    no border below: it is a row of the panel again, or blank)."""
    return screen.rstrip("\n").splitlines()[-2].strip() != typed


@pytest.fixture
def tmux(tmp_path: Path, fake_nvml: FakeNvml) -> Iterator[Tmux]:
    session = Tmux(tmp_path, fake_nvml.env() | {"TERM": "xterm-256color"})
    yield session
    session.kill_server()


def test_sort_filter_and_kill_a_real_process_then_quit(
    tmux: Tmux, fake_nvml: FakeNvml, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    pids = sorted(process.pid for process in sleepers)
    fake_nvml.write(machine(sleepers))
    tmux.start([sys.executable, "-m", "gputop", "--interval", "0.5"])

    screen = tmux.wait_for("both GPUs", lambda s: "H100 80GB HBM3" in s and "A100-SXM4-80GB" in s)
    screen = tmux.wait_for("the three sleepers", lambda s: len(row_pids(s, pids)) == 3)
    assert row_pids(screen, pids) == pids[::-1], "GPU memory, largest first"

    tmux.keys("N")
    screen = tmux.wait_for("PID order", lambda s: row_pids(s, pids) == pids)
    assert "PID▲" in screen

    victim = pids[1]
    victim_process = next(p for p in sleepers if p.pid == victim)
    # One step at a time, as a person types: keys that arrive in one burst can reach the
    # widget that had the focus before (see tests/ui/test_typeahead.py).
    tmux.keys("/")
    tmux.wait_for("the filter box", lambda s: "text, PID, user, container" in s)
    tmux.keys(str(victim), literal=True)
    tmux.wait_for("the filtered panel", lambda s: "Processes 1 of 3" in s and f"filter: /{victim}" in s)
    tmux.keys("Enter")
    screen = tmux.wait_for("the filter box to close", lambda s: filter_box_closed(s, str(victim)))
    assert row_pids(screen, pids) == [victim]

    tmux.keys("k")
    screen = tmux.wait_for("the kill dialog", lambda s: "Send a signal to 1 process?" in s)
    assert re.search(rf"PID {victim}\s.*sleep 601", screen)
    tmux.keys("Enter")
    assert victim_process.wait(timeout=TIMEOUT_S) == -15
    tmux.wait_for("the notice", lambda s: f"SIGTERM sent to PID {victim}" in s)
    assert all(p.poll() is None for p in sleepers if p is not victim_process), "only the victim was signalled"

    # The driver stops listing the dead process, as a real one would.
    fake_nvml.write(machine([p for p in sleepers if p is not victim_process]))
    screen = tmux.wait_for("the row to go", lambda s: "Processes 0 of 2" in s)
    assert "no process matches the filter" in screen
    tmux.keys("Escape")
    screen = tmux.wait_for("the two survivors", lambda s: "Processes 2 " in s and len(row_pids(s, pids)) == 2)
    assert row_pids(screen, pids) == [pids[0], pids[2]]

    tmux.keys("q")
    assert tmux.exit_status() == 0, f"the screen was:\n{tmux.screen()}"


def test_an_idle_hog_gets_its_badge_and_alert_and_loses_the_badge_when_it_runs(
    tmux: Tmux, fake_nvml: FakeNvml, sleepers: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    hog = sleepers[0].pid
    settings = tmp_path / "settings.toml"
    settings.write_text("[thresholds]\nidle_after_s = 2.0\n")

    def scenario(sm: int | None) -> Scenario:
        return Scenario().gpu(memory_used=31 * GiB).process(gpu=0, pid=hog, used=30 * GiB, sm=sm)

    fake_nvml.write(scenario(None))  # holds 30 GiB, absent from the utilization samples: not running
    # 130 columns: the IDLE column shows from 121 (beside GROWTH, which 120 keeps).
    tmux.start([sys.executable, "-m", "gputop", "--interval", "0.5", "--config", str(settings)], (130, ROWS))

    def hog_row(screen: str) -> str:
        return next((line for line in screen.splitlines() if re.search(rf"\s{hog}\s.*\bsleep 600", line)), "")

    screen = tmux.wait_for("the idle badge", lambda s: "idle 0m" in hog_row(s))
    # Raised in gputop's first seconds: counted in the title (no toast over the panel), listed by `!`.
    tmux.wait_for("the alert count", lambda s: "⚠ 1" in s.splitlines()[0])
    tmux.keys("!")
    screen = tmux.wait_for("the idle alert", lambda s: f"PID {hog} (sleep, " in s)
    assert re.search(r"idle \ds on GPU 0, holding", screen.replace("\n", " ").replace("│", " ")), screen
    tmux.keys("Escape")
    tmux.wait_for("the main screen", lambda s: hog_row(s) != "")

    fake_nvml.write(scenario(60))
    screen = tmux.wait_for("the badge to go", lambda s: hog_row(s) != "" and "idle" not in hog_row(s))
    tmux.keys("q")
