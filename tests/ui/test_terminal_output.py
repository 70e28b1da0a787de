"""The real command on a (pseudo-)terminal: the changed cells it sends add up to what Textual drew."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

import pyte

COLUMNS, ROWS = 100, 30

# gputop, with every frame Textual hands to the changed-cell writer also written, whole, to a file.
RUN_AND_LOG_UPDATES = """
import sys
from gputop.cli.main import main
from gputop.ui.terminal import textual_private

log = open(sys.argv[1], "w", encoding="utf-8")
changed_cells = textual_private.changed_cells

def logged(diff, frame, console, size):
    log.write(frame.render_segments(console))
    log.flush()
    return changed_cells(diff, frame, console, size)

textual_private.changed_cells = logged
sys.argv[1:] = sys.argv[2:]
raise SystemExit(main())
"""


def _read_for(master: int, seconds: float, sink: list[bytes]) -> None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            sink.append(chunk)
            if b"\x1b[c" in chunk:  # device attributes: answer as a VT220 would
                os.write(master, b"\x1b[?62;22c")


def _cells(data: bytes) -> list[list[tuple[object, ...]]]:
    screen = pyte.Screen(COLUMNS, ROWS)
    pyte.ByteStream(screen).feed(data)
    return [[tuple(screen.buffer[y][x]) for x in range(COLUMNS)] for y in range(ROWS)]


def test_the_changed_cells_sent_add_up_to_the_screen_textual_drew(tmp_path: Path) -> None:
    log = tmp_path / "updates.txt"
    pid, master = pty.fork()
    if pid == 0:  # the child: never return into the test runner
        try:
            os.environ["TERM"] = "xterm-256color"
            for name in ("COLUMNS", "LINES"):  # they would win over the terminal's size
                os.environ.pop(name, None)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            command = ["-c", RUN_AND_LOG_UPDATES, str(log), "--demo", "--interval", "0.2"]
            os.execvp(sys.executable, [sys.executable, *command])
        finally:
            os._exit(127)
    output: list[bytes] = []
    try:
        _read_for(master, 3.0, output)  # start-up and a dozen ticks of changed cells
        os.write(master, b"[" * 8)  # a slower refresh, 0.2 s -> 60 s between ticks: the screen stops changing
        # Until a second goes by with nothing written: on a loaded machine the last frames come late.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            before = len(output)
            _read_for(master, 1.0, output)
            if len(output) == before:
                break
        sent = b"".join(output)
        drawn = log.read_bytes()
        assert len(sent) < len(drawn) / 2
        assert _cells(sent) == _cells(drawn)
    finally:
        with contextlib.suppress(OSError):
            os.write(master, b"q")
        deadline = time.monotonic() + 5
        while (exited := os.waitpid(pid, os.WNOHANG)[0] == pid) is False and time.monotonic() < deadline:
            _read_for(master, 0.1, [])
        if not exited:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(master)
