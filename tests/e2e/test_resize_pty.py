"""The real gputop in a pseudo-terminal through a storm of window resizes (SIGWINCH)."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte


@pytest.fixture
def terminal(fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]) -> Iterator[PtyTerminal]:
    scenario = Scenario()
    for _ in range(8):
        scenario.gpu(name="NVIDIA H100 80GB HBM3", util_gpu=70)
    scenario.process(gpu=3, pid=sleeper.pid, used=12 * GiB)
    fake_nvml.write(scenario)
    term = PtyTerminal([sys.executable, "-m", "gputop", "--interval", "0.2"], fake_nvml.env(), 120, 40)
    yield term
    term.close()


def test_fifty_resizes_in_two_seconds_then_a_whole_screen_and_a_clean_quit(
    terminal: PtyTerminal, sleeper: subprocess.Popen[bytes]
) -> None:
    terminal.wait_for("the GPUs and the process", lambda s: "H100 80GB HBM3" in s and f" {sleeper.pid} " in s)
    sizes = random.Random(3)
    started = time.monotonic()
    for n in range(50):
        columns, rows = (20, 5) if n % 10 == 0 else (sizes.randint(2, 220), sizes.randint(2, 70))
        terminal.resize(columns, rows)
        terminal.pump(max(0.0, started + (n + 1) * 0.04 - time.monotonic()))
    assert time.monotonic() - started < 2.5
    assert terminal.alive(), "gputop died in the storm"

    terminal.resize(20, 5)
    small = terminal.wait_for("the too-small notice", lambda s: "terminal" in s and "too small" in s)
    assert "H100" not in small
    terminal.resize(120, 40)
    screen = terminal.wait_for("the whole screen again", lambda s: "H100 80GB HBM3" in s and f" {sleeper.pid} " in s)
    assert "too small" not in screen
    terminal.type(b"q")
    assert terminal.wait_exit() == 0
    assert b"Traceback" not in bytes(terminal.raw)
