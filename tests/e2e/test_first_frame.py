"""The real gputop in a pseudo-terminal: the GPUs are on screen before the full screen has loaded, and it
loads no more than it uses."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

import pyte  # noqa: E402

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

END_OF_FIRST_FRAME = "starting…\x1b[0m".encode()


def test_the_first_frame_shows_what_nvml_lists_then_the_full_screen_replaces_it(
    fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]
) -> None:
    scenario = Scenario().gpu(name="NVIDIA H100 80GB HBM3", util_gpu=70, memory_used=20 * GiB)
    scenario.gpu(name="NVIDIA H100 80GB HBM3", power_mw=None)
    fake_nvml.write(scenario.process(gpu=1, pid=sleeper.pid, used=12 * GiB, sm=40))
    terminal = PtyTerminal([sys.executable, "-m", "gputop", "--interval", "0.5"], fake_nvml.env(), 80, 24)
    try:
        terminal.wait_for("the first frame", lambda _: END_OF_FIRST_FRAME in terminal.raw)
        # The screen as the first frame left it, before anything the full screen wrote.
        first = pyte.Screen(80, 24)
        pyte.ByteStream(first).feed(bytes(terminal.raw[: terminal.raw.index(END_OF_FIRST_FRAME) + 13]))
        assert [line.rstrip() for line in first.display[:7]] == [
            f"{socket.gethostname()}  driver 550.54.15"[:80],
            "[0] NVIDIA H100 80GB HBM3     35°C   70W util  70% mem 20.0GiB/80.0GiB  25%",
            "[1] NVIDIA H100 80GB HBM3     35°C   N/A util   0% mem 1.0GiB/80.0GiB   1%",
            "",
            " GPU     PID  GPU-MEM    SM",
            f"   1 {sleeper.pid:>7}  12.0GiB   40%",
            "starting…",
        ]
        # The full screen then draws over it, with the host facts the first frame did not wait for.
        screen = terminal.wait_for("the full screen", lambda s: "sleep 600" in s)
        assert "starting…" not in screen
        # asyncio's ssl (OpenSSL, 4 MiB) is not loaded for TLS the TUI never speaks.
        with open(f"/proc/{terminal.pid}/maps") as maps:
            assert "_ssl" not in maps.read()
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
        assert b"Traceback" not in bytes(terminal.raw)
    finally:
        terminal.close()
