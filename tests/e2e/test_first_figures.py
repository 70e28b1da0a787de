"""The real gputop in a pseudo-terminal beside a busy loop: no false 0 on its first screens. The host's
CPU % is true from the first screen that shows one; a process's CPU % is `…` until two readings of it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

HOST_CPU = re.compile(r"\bCPU (\S+)  RAM")  # the host strip's narrow form (under 110 columns)


@pytest.fixture
def spinner() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: pass", "spin"])
    yield process
    process.kill()
    process.wait()


def test_a_busy_loop_shows_above_0_on_the_first_screen_with_a_cpu_figure(
    fake_nvml: FakeNvml, spinner: subprocess.Popen[bytes]
) -> None:
    fake_nvml.write(Scenario().gpu().process(gpu=0, pid=spinner.pid, used=4 * GiB))
    # Two seconds between ticks: main showed CPU 0.0% (and the process 0.0) for all of the first two.
    terminal = PtyTerminal([sys.executable, "-m", "gputop", "--interval", "2"], fake_nvml.env(), 100, 30)
    try:
        screens = []

        def cpu_shown(screen: str) -> bool:
            screens.append(screen)
            return HOST_CPU.search(screen) is not None and "spin" in screen

        screen = terminal.wait_for("the host's CPU % and the process", cpu_shown)
        match = HOST_CPU.search(screen)
        assert match is not None and match.group(1) != "…", screen
        assert float(match.group(1).rstrip("%")) > 0, screen
        # Every screen until the process's second reading: its CPU % is "…", never 0.0.
        row = next(line for line in screen.splitlines() if f" {spinner.pid} " in line)
        assert " 0.0 " not in row and ("…" in row.split() or re.search(r" [1-9]\d*\.\d ", row)), row
        later = terminal.wait_for("its CPU %", lambda s: re.search(rf" {spinner.pid} .* [1-9]\d*\.\d ", s) is not None)
        assert HOST_CPU.search(later) is not None
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
