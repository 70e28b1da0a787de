"""The real gputop in a pseudo-terminal on a fake driver that hangs: q quits within a second whatever the
driver is doing and wherever gputop is (the full screen, the first frame, the wait on nvmlInit), and start
never waits on a hung GPU past the deadline.
"""

from __future__ import annotations

import re
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import INIT_FUNCTIONS, GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.ui.terminal.first_frame import LEAVE

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

import pyte  # noqa: E402

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

DEADLINE_S = 0.5
# From writing the key to the exit status: the promise. Measured at 0.21-0.27 s on a 2-core machine
# at load 3.5; 0.2 s of that is Textual's input thread ending (two 0.1 s waits on the terminal), the rest
# takes little CPU, so the bound holds with room on a loaded machine.
QUIT_S = 1.0
END_OF_FIRST_FRAME = "starting…\x1b[0m".encode()
CTRL_C = b"\x03"
INTERRUPTED = 130


def machine() -> Scenario:
    return (
        Scenario()
        .gpu(name="NVIDIA H100 80GB HBM3", util_gpu=80, memory_used=30 * GiB)
        .gpu(name="NVIDIA A100-SXM4-80GB", util_gpu=20, memory_used=8 * GiB)
    )


def command(tmp_path: Path, deadline_s: float = DEADLINE_S) -> list[str]:
    config = tmp_path / "settings.toml"
    config.write_text(f"driver_deadline_s = {deadline_s}\n")
    return [sys.executable, "-m", "gputop", "--config", str(config), "--interval", "0.5"]


@pytest.fixture
def run(fake_nvml: FakeNvml) -> Iterator[list[PtyTerminal]]:
    """Terminals started by the test, closed after it."""
    terminals: list[PtyTerminal] = []
    yield terminals
    for terminal in terminals:
        terminal.close()


def start(terminals: list[PtyTerminal], fake: FakeNvml, argv: list[str]) -> PtyTerminal:
    terminal = PtyTerminal(argv, fake.env(), 120, 40)
    terminals.append(terminal)
    return terminal


def on_first_frame(terminals: list[PtyTerminal], fake: FakeNvml, tmp_path: Path, scenario: Scenario) -> PtyTerminal:
    """gputop started on ``scenario``, once its first frame is on the terminal."""
    fake.write(scenario)
    terminal = start(terminals, fake, command(tmp_path))
    terminal.wait_for("the first frame", lambda _: END_OF_FIRST_FRAME in terminal.raw)
    return terminal


def press_and_wait_for_exit(terminal: PtyTerminal, key: bytes) -> tuple[int, float]:
    """Type ``key``; the exit status, and the seconds from the keystroke to it."""
    pressed = time.monotonic()
    terminal.type(key)
    while terminal.alive():
        assert time.monotonic() - pressed < 30, f"gputop did not exit; the screen was:\n{terminal.text()}"
        terminal.pump(0.01)
    took = time.monotonic() - pressed
    terminal.pump(0.05)  # what it wrote just before it exited may still wait in the pty
    assert terminal.exit_status is not None
    return terminal.exit_status, took


def echoing(terminal: PtyTerminal) -> bool:
    """Whether the terminal echoes and edits lines, as a shell leaves it (and as gputop must)."""
    local_modes = termios.tcgetattr(terminal.master)[3]
    return bool(local_modes & termios.ECHO) and bool(local_modes & termios.ICANON)


def card_title(screen: str, name: str) -> str:
    line = next(line for line in screen.splitlines() if name in line)
    return next(title for title in re.split("[╮┓]", line) if name in title)


# One GPU hung is not a case of its own: every GPU hung stalls every call the quit could wait on
# (the GPU count, the XID thread, nvmlShutdown too), and test_tmux_stall.py hangs one GPU first.
@pytest.mark.parametrize(
    ("hang", "key"),
    [("nothing", b"q"), ("every GPU", b"q"), ("every GPU", CTRL_C)],
)
def test_the_full_screen_quits_within_a_second_whatever_the_driver_is_doing(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path, hang: str, key: bytes
) -> None:
    fake_nvml.write(machine())
    terminal = start(run, fake_nvml, command(tmp_path))
    terminal.wait_for("both GPUs", lambda s: "80%" in s and "A100-SXM4-80GB" in s and "starting…" not in s)
    if hang != "nothing":
        # Every call: also the GPU count, the XID thread's wait on the driver, nvmlShutdown.
        fake_nvml.write(machine().stall(None, 60.0))
        terminal.wait_for("every GPU not answering", lambda s: s.count("not answering") == 2)

    status, took = press_and_wait_for_exit(terminal, key)

    assert status == 0 and took < QUIT_S, f"exit status {status} after {took:.2f}s"
    assert echoing(terminal)
    assert b"Traceback" not in terminal.raw


@pytest.mark.parametrize(("key", "expected"), [(b"q", 0), (CTRL_C, INTERRUPTED)])
def test_a_hung_nvml_init_is_told_and_q_or_ctrl_c_quits_within_a_second(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path, key: bytes, expected: int
) -> None:
    fake_nvml.write(machine().delay(INIT_FUNCTIONS, 60.0))
    terminal = start(run, fake_nvml, command(tmp_path))
    screen = terminal.wait_for("the message", lambda s: "(q or Ctrl+C quits)" in "".join(s.splitlines()))
    assert "".join(screen.splitlines()).startswith("gputop: nvmlInit has not answered within 0.5s: the NVIDIA")
    assert not echoing(terminal)  # gputop reads the keys: q is not echoed and needs no Enter

    status, took = press_and_wait_for_exit(terminal, key)

    assert status == expected and took < QUIT_S, f"exit status {status} after {took:.2f}s"
    assert echoing(terminal)
    assert b"Traceback" not in terminal.raw


def test_keys_typed_while_nvml_init_is_slow_reach_the_full_screen_in_order(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    fake_nvml.write(machine().delay(INIT_FUNCTIONS, 2.0))  # answers, late: after the message
    terminal = start(run, fake_nvml, command(tmp_path))
    terminal.wait_for("the message", lambda s: "(q or Ctrl+C quits)" in "".join(s.splitlines()))
    assert not echoing(terminal)  # gputop reads the keys while it waits

    terminal.type(b"N")  # sort by PID
    terminal.type(b"I")  # then invert it: the order of the two tells they came in order

    terminal.wait_for("the panel sorted by PID, largest first", lambda s: "PID▼" in s)
    status, took = press_and_wait_for_exit(terminal, b"q")
    assert status == 0 and took < QUIT_S, f"exit status {status} after {took:.2f}s"
    assert echoing(terminal)


def test_q_quits_within_a_second_while_the_first_look_waits_on_a_hung_gpu(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    fake_nvml.write(machine().stall(1, 60.0, "nvmlDeviceGetMemoryInfo"))
    terminal = start(run, fake_nvml, command(tmp_path, deadline_s=30.0))
    # gputop takes the keys (no echo) before it first asks the driver; nvmlInit answers at once, so
    # half a second later it is waiting on GPU 1, for the deadline (30 s) before the first frame.
    give_up = time.monotonic() + 30
    while echoing(terminal):
        assert time.monotonic() < give_up, "gputop never took the keys"
        terminal.pump(0.01)
    terminal.pump(0.5)
    assert terminal.raw == b"" and not echoing(terminal)

    status, took = press_and_wait_for_exit(terminal, b"q")

    assert status == 0 and took < QUIT_S, f"exit status {status} after {took:.2f}s"
    assert terminal.raw == b"" and echoing(terminal)


def test_ctrl_c_in_the_first_frame_gives_the_terminal_back_as_it_was(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    terminal = on_first_frame(run, fake_nvml, tmp_path, machine())

    # Pressed while the full screen (Textual) is still being imported.
    status, took = press_and_wait_for_exit(terminal, CTRL_C)

    assert status == INTERRUPTED and took < QUIT_S, f"exit status {status} after {took:.2f}s"
    # After the first frame, only the terminal's echo of the key and leaving the alternate screen, cursor shown.
    after = bytes(terminal.raw[terminal.raw.index(END_OF_FIRST_FRAME) + len(END_OF_FIRST_FRAME) :])
    assert after.replace(b"^C", b"", 1) == LEAVE.encode()
    assert echoing(terminal)


def test_a_key_typed_on_the_first_frame_reaches_the_full_screen(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    terminal = on_first_frame(run, fake_nvml, tmp_path, machine())

    terminal.type(b"N")  # sort by PID, before the full screen is there to take it

    terminal.wait_for("the panel sorted by PID", lambda s: "PID▲" in s)
    status, took = press_and_wait_for_exit(terminal, b"q")
    assert status == 0 and took < QUIT_S, f"exit status {status} after {took:.2f}s"


def test_a_gpu_hung_at_start_is_marked_in_the_first_frame_and_the_full_screen_takes_keys_at_once(
    run: list[PtyTerminal], fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    terminal = on_first_frame(run, fake_nvml, tmp_path, machine().stall(1, 60.0, "nvmlDeviceGetMemoryInfo"))

    first = pyte.Screen(120, 40)
    pyte.ByteStream(first).feed(bytes(terminal.raw[: terminal.raw.index(END_OF_FIRST_FRAME) + 13]))
    lines = [line.rstrip() for line in first.display[1:4]]
    assert lines[0].startswith("[0] NVIDIA H100 80GB HBM3     35°C   70W util  80% mem 30.0GiB/80.0GiB")
    assert re.fullmatch(r"\[1\] NVIDIA A100-SXM4-80GB  not answering \d\.\ds", lines[1]), lines[1]
    assert lines[2] == "starting…"
    screen = terminal.wait_for("the full screen", lambda s: "starting…" not in s and "CPU" in s)
    assert re.search(r"not answering \d+\.\ds", card_title(screen, "A100-SXM4-80GB"))
    assert "not answering" not in card_title(screen, "H100 80GB HBM3")

    status, took = press_and_wait_for_exit(terminal, b"q")

    assert status == 0 and took < QUIT_S, f"exit status {status} after {took:.2f}s"
