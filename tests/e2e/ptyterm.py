"""A program in a pseudo-terminal, for tests: every raw byte it writes, the screen a terminal would show, keys in.

Like tests/bench/ptyrun.py (which measures), but interactive: wait for text, type,
resize, and read back exactly what reached the terminal.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time
from collections.abc import Callable, Sequence

import pyte

# What a real terminal answers, so a program that asks does not wait for ever.
_QUERIES = {
    b"\x1b[c": b"\x1b[?62;22c",  # device attributes: a VT220
    b"\x1b[6n": b"\x1b[1;1R",  # cursor position
}


class PtyTerminal:
    """Runs ``command`` in a ``columns`` x ``rows`` pty; ``raw`` holds every byte it wrote."""

    def __init__(
        self, command: Sequence[str], env: dict[str, str], columns: int = 120, rows: int = 40,
        term: str = "xterm-256color",
    ) -> None:
        self.columns, self.rows = columns, rows
        self.screen = pyte.Screen(columns, rows)
        self._stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.exit_status: int | None = None
        pid, master = pty.fork()
        if pid == 0:  # the child: its terminal has the size before the program can ask for it
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
                # As a terminal's shell starts a program: Ctrl-C interrupts it even where the tests
                # themselves run with SIGINT ignored (a background job of a script).
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                # COLUMNS and LINES would win over the terminal's size.
                kept = {name: value for name, value in env.items() if name not in ("COLUMNS", "LINES")}
                os.execvpe(command[0], list(command), kept | {"TERM": term})
            finally:
                os._exit(127)
        self.pid, self.master = pid, master

    def _set_size(self, columns: int, rows: int) -> None:
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    def text(self) -> str:
        """The screen as a terminal shows it, one line per row."""
        return "\n".join(self.screen.display)

    def pump(self, seconds: float = 0.05) -> None:
        """Read what the program wrote within ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.master], [], [], max(0.0, remaining))
            if not ready:
                return
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.raw += chunk
            for query, answer in _QUERIES.items():
                if query in chunk:
                    with contextlib.suppress(OSError):
                        os.write(self.master, answer)
            self._stream.feed(chunk)

    def wait_for(self, what: str, check: Callable[[str], bool], timeout_s: float = 30.0) -> str:
        """Read until the screen satisfies ``check``; fail with the screen after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.pump(0.05)
            screen = self.text()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def resize(self, columns: int, rows: int) -> None:
        """Resize the terminal, as a window manager does: new size, then SIGWINCH."""
        self.columns, self.rows = columns, rows
        self.screen.resize(rows, columns)
        self._set_size(columns, rows)
        os.kill(self.pid, signal.SIGWINCH)

    def alive(self) -> bool:
        if self.exit_status is not None:
            return False
        done, status = os.waitpid(self.pid, os.WNOHANG)
        if done:
            self.exit_status = os.waitstatus_to_exitcode(status)
            return False
        return True

    def wait_exit(self, timeout_s: float = 15.0) -> int:
        """Wait for the program to exit (reading its output meanwhile); its exit status."""
        deadline = time.monotonic() + timeout_s
        while self.alive():
            if time.monotonic() > deadline:
                raise AssertionError(f"the program did not exit; the screen was:\n{self.text()}")
            self.pump(0.05)
        self.pump(0.05)
        assert self.exit_status is not None
        return self.exit_status

    def close(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.master)


def full_demo_screen(screen: str) -> bool:
    """The demo's full Textual screen is up with its process rows: its footer, and a user in a row.

    Not a command: a narrow panel cuts the commands.
    """
    return "F1 Help" in screen and " alice " in screen


def output_until(
    command: Sequence[str], env: dict[str, str], what: str, check: Callable[[str], bool], columns: int = 100,
    rows: int = 30, term: str = "xterm-256color",
) -> bytes:
    """Run ``command`` until its screen satisfies ``check``, quit it with ``q``; every byte it wrote
    (in a terminal that says it is ``term``)."""
    terminal = PtyTerminal(command, env, columns, rows, term)
    try:
        terminal.wait_for(what, check)
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
        return bytes(terminal.raw)
    finally:
        terminal.close()
