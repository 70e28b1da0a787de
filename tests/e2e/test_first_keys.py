"""The real gputop in a pseudo-terminal: every key typed once its first frame shows is acted on, in order;
with standard error sent to a file it still draws on the terminal and gives it back; with no terminal it
says which outputs to use instead.
"""

from __future__ import annotations

import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

END_OF_FIRST_FRAME = "starting…\x1b[0m".encode()
ALTERNATE_SCREEN, MAIN_SCREEN = b"\x1b[?1049h", b"\x1b[?1049l"
F10 = b"\x1b[21~"
NO_TERMINAL = (
    "gputop: the live view needs a terminal (standard input and output are not a terminal):"
    " use --once for a table or --json for JSON\n"
)


def machine(pid: int) -> Scenario:
    scenario = Scenario().gpu(name="NVIDIA H100 80GB HBM3", util_gpu=70, memory_used=20 * GiB)
    scenario.gpu(name="NVIDIA A100-SXM4-80GB", util_gpu=20, memory_used=8 * GiB)
    return scenario.process(gpu=1, pid=pid, used=12 * GiB, sm=40)


def echoing(terminal: PtyTerminal) -> bool:
    """Whether the terminal echoes and edits lines, as a shell leaves it (and as gputop must)."""
    local_modes = termios.tcgetattr(terminal.master)[3]
    return bool(local_modes & termios.ECHO) and bool(local_modes & termios.ICANON)


def gputop(fake: FakeNvml, *, redirect: str = "") -> PtyTerminal:
    """gputop in a 120x40 pty, its streams redirected as a shell does (``2>err.log``, ``</dev/null``)."""
    argv = [sys.executable, "-m", "gputop", "--interval", "0.5"]
    if redirect:
        argv = ["sh", "-c", f'exec "$0" "$@" {redirect}', *argv]
    return PtyTerminal(argv, fake.env(), 120, 40)


@pytest.fixture
def at_first_figure(fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]) -> Iterator[PtyTerminal]:
    """gputop on a machine where ``sleeper`` holds GPU 1, as its first GPU figure shows (on the first frame:
    the full screen has not drawn yet), to type at once, as a user does."""
    fake_nvml.write(machine(sleeper.pid))
    terminal = gputop(fake_nvml)
    try:
        terminal.wait_for("the first GPU figure", lambda screen: "20.0GiB" in screen)
        assert bytes(terminal.raw).endswith(END_OF_FIRST_FRAME), "the full screen drew before the first figure"
        yield terminal
    finally:
        terminal.close()


def test_slash_a_pid_enter_enter_typed_at_the_first_figure_opens_that_process(
    at_first_figure: PtyTerminal, sleeper: subprocess.Popen[bytes]
) -> None:
    terminal = at_first_figure

    terminal.type(b"/" + str(sleeper.pid).encode() + b"\r\r")  # filter by the PID, then open its process

    screen = terminal.wait_for("the process screen", lambda s: "Command" in s and "Esc Back" in s)
    assert screen.splitlines()[0].startswith(f" PID {sleeper.pid}  sleep")
    assert "sleep 600" in screen
    # Not echoed over the first frame: nothing reached the terminal between it and the full screen.
    after_frame = bytes(terminal.raw).split(END_OF_FIRST_FRAME, 1)[1]
    assert str(sleeper.pid).encode() not in after_frame.split(ALTERNATE_SCREEN, 1)[0]
    terminal.type(F10)  # quits from any screen (q goes back to the main one)
    assert terminal.wait_exit() == 0
    assert echoing(terminal)
    assert b"Traceback" not in terminal.raw


def test_q_typed_at_the_first_figure_quits_and_gives_the_terminal_back(at_first_figure: PtyTerminal) -> None:
    terminal = at_first_figure
    assert not echoing(terminal)  # the keys wait for the full screen, not echoed over the frame

    pressed = time.monotonic()
    terminal.type(b"q")

    assert terminal.wait_exit() == 0
    took = time.monotonic() - pressed
    # Measured at 0.5-0.8 s on a 2-core machine (most of it the full screen loading): room for load.
    assert took < 5.0, f"exit after {took:.2f}s"
    assert echoing(terminal)
    raw = bytes(terminal.raw)
    assert MAIN_SCREEN in raw[raw.rindex(ALTERNATE_SCREEN) :]
    assert b"Traceback" not in terminal.raw


def test_with_stderr_sent_to_a_file_the_full_screen_draws_on_the_terminal_and_gives_it_back(
    fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    fake_nvml.write(machine(sleeper.pid))
    log = tmp_path / "err.log"
    terminal = gputop(fake_nvml, redirect=f'2>"{log}"')
    try:
        screen = terminal.wait_for("the full screen", lambda s: "sleep 600" in s and "starting…" not in s)
        assert "A100-SXM4-80GB" in screen
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
        # The alternate screen left after the last time it was entered, and the modes as the shell had them.
        raw = bytes(terminal.raw)
        assert MAIN_SCREEN in raw[raw.rindex(ALTERNATE_SCREEN) :]
        assert echoing(terminal)
        assert log.read_bytes() == b""  # nothing of the screen went into the file
    finally:
        terminal.close()


def test_with_no_terminal_at_all_it_says_to_use_once_or_json() -> None:
    # `gputop --demo < /dev/null | cat`: standard input and output are not a terminal.
    done = subprocess.run(
        [sys.executable, "-m", "gputop", "--demo"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
    )

    assert (done.returncode, done.stdout, done.stderr.decode()) == (2, b"", NO_TERMINAL)


def test_with_a_terminal_to_draw_on_but_none_for_the_keys_it_says_so_and_leaves_the_terminal_alone(
    fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]
) -> None:
    fake_nvml.write(machine(sleeper.pid))
    terminal = gputop(fake_nvml, redirect="</dev/null")
    try:
        assert terminal.wait_exit() == 2
        assert bytes(terminal.raw).decode() == (
            "gputop: the live view needs a terminal (standard input is not a terminal, so keys cannot be read):"
            " use --once for a table or --json for JSON\r\n"
        )
        assert echoing(terminal)
    finally:
        terminal.close()
