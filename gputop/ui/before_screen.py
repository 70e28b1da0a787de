"""The terminal from start until the full screen takes it: q quits at once, whatever the driver is doing.

Before Textual runs nothing reads the keyboard, and what comes first can wait on the driver: an
nvmlInit that does not answer, the first look at a GPU that hangs (up to the deadline), then
importing Textual. Within ``watching()`` a thread reads the keys, with the terminal's echo and line
editing off: q (or F10, as on the full screen) gives the terminal back as it was and ends the
process at once with status 0. Ctrl+C stays the terminal's interrupt (KeyboardInterrupt, status
130); leaving the block, however, gives the terminal back. Other keys are dropped: the screen they
are meant for is not up yet.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
import threading
from collections.abc import Iterator
from typing import Any, NoReturn, TextIO

from gputop.core.sampler import Sampler
from gputop.ui.first_frame import LEAVE, draw_first_frame

QUIT_KEYS = (b"q", b"\x1b[21~")  # q, F10
QUIT_STATUS = 0
_LFLAG, _CC = 3, 6  # indexes in termios.tcgetattr's list


class Terminal:
    """The terminal while it is gputop's and not yet the full screen's."""

    def __init__(self, out: TextIO, keys: int | None) -> None:
        """Draw on ``out``; read q from the terminal ``keys`` (a file descriptor; None: read nothing)."""
        self._out = out
        self._keys = keys
        self._lock = threading.Lock()  # held while drawing, and while q gives the terminal back
        self._alternate = False  # the first frame is on the alternate screen
        self._saved: list[Any] | None = None
        self._reader: threading.Thread | None = None
        self._wake_read, self._wake_write = -1, -1
        if keys is not None:
            saved, quiet = termios.tcgetattr(keys), termios.tcgetattr(keys)
            quiet[_LFLAG] &= ~(termios.ICANON | termios.ECHO)
            quiet[_CC][termios.VMIN], quiet[_CC][termios.VTIME] = 1, 0
            self._wake_read, self._wake_write = os.pipe()
            try:
                termios.tcsetattr(keys, termios.TCSANOW, quiet)
            except termios.error:
                os.close(self._wake_read)
                os.close(self._wake_write)
                raise
            self._saved = saved
            self._reader = threading.Thread(target=self._read_keys, name="gputop-keys", daemon=True)
            self._reader.start()

    def first_frame(self, sampler: Sampler) -> None:
        """Show the GPUs at once, while the full screen loads (on a terminal only)."""
        if not self._out.isatty():
            return
        try:
            snapshot = sampler.first_look()
        except Exception:  # noqa: BLE001 - the full screen's first sample reports it
            return
        with self._lock:
            self._alternate = draw_first_frame(snapshot, self._out)

    def give_back(self, leave_screen: bool) -> None:
        """Stop reading keys, put the terminal's modes back; ``leave_screen``: the first frame's screen too."""
        reader, self._reader = self._reader, None
        if reader is not None:
            # Not under the lock: a q read just now is quitting under it.
            os.write(self._wake_write, b"\0")
            reader.join()
            for descriptor in (self._wake_read, self._wake_write):
                os.close(descriptor)
        with self._lock:
            self._restore(leave_screen)

    def _restore(self, leave_screen: bool) -> None:
        if self._keys is not None and self._saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self._keys, termios.TCSANOW, self._saved)
            self._saved = None
        if leave_screen and self._alternate:
            self._alternate = False
            with contextlib.suppress(OSError):
                os.write(self._out.fileno(), LEAVE.encode())

    def _read_keys(self) -> None:
        assert self._keys is not None
        recent = b""
        while True:
            ready, _, _ = select.select([self._keys, self._wake_read], [], [])
            if self._wake_read in ready:
                return
            try:
                data = os.read(self._keys, 64)
            except OSError:
                return
            if not data:
                return
            recent = (recent + data)[-8:]  # F10 may come in two reads
            if any(key in recent for key in QUIT_KEYS):
                self._quit()

    def _quit(self) -> NoReturn:
        # Not through the main thread: it may be waiting on the driver, for as long as the driver hangs.
        with self._lock:
            self._restore(leave_screen=True)
            os._exit(QUIT_STATUS)


@contextlib.contextmanager
def watching(enabled: bool = True) -> Iterator[Terminal]:
    """Within the block q quits at once; after it, the terminal is as it was, but for the first frame
    (left on the alternate screen for the full screen to draw over, unless the block raised)."""
    stdin = sys.stdin
    keys = stdin.fileno() if enabled and stdin is not None and stdin.isatty() else None
    try:
        terminal = Terminal(sys.stdout, keys)
    except (OSError, termios.error):  # not a terminal after all: nothing to watch
        terminal = Terminal(sys.stdout, None)
    try:
        yield terminal
    except BaseException:
        terminal.give_back(leave_screen=True)
        raise
    terminal.give_back(leave_screen=False)
