"""Before the full screen: q quits at once while gputop waits on a driver that may hang, and the keys
typed on the first frame wait for the full screen.

Until Textual runs nothing reads the keyboard, and two steps before it wait on the driver:
nvmlInit (for as long as it hangs) and the first look at the GPUs (up to the deadline).
Within ``quit_keys()``, once the block has lasted ``GRACE_S`` (a driver that answers is done
long before), a thread reads the keys with the terminal's echo and line editing off: q (or
F10, as on the full screen) puts the terminal back as it was and ends the process at once with
status 0. Ctrl+C stays the terminal's interrupt (KeyboardInterrupt, status 130). Other keys
read then are kept, as typed, for the full screen (``early_keys.typed_keys`` makes keys of them);
a block that ends within the grace leaves the terminal untouched, so keys typed ahead of a normal
start wait in the terminal's queue for the full screen.

From the first frame until the full screen reads the keyboard (most of a second: Textual is imported
and its screen built meanwhile), ``holding_keys()`` turns the terminal's echo and line editing off and
reads nothing: each key typed waits in the terminal's queue, unchanged (Enter stays Enter, not a
newline) and not echoed over the frame, and the full screen reads it as if typed then. Its driver gives
the terminal's modes back first (``KeyHold.give_back``), so that it saves and restores them as they were.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
import threading
from collections.abc import Iterator
from typing import Any

GRACE_S = 0.2
QUIT_KEYS = (b"q", b"\x1b[21~")  # q, F10
QUIT_STATUS = 0
_IFLAG, _LFLAG, _CC = 0, 3, 6  # indexes in termios.tcgetattr's list


def _held_modes(saved: list[Any]) -> list[Any]:
    """The terminal's modes ``saved``, as the full screen sets them: no echo, no line editing, CR and LF
    as typed, Ctrl+S and Ctrl+Q as keys."""
    held: list[Any] = [list(value) if isinstance(value, list) else value for value in saved]
    held[_LFLAG] &= ~(termios.ICANON | termios.ECHO | termios.IEXTEN)
    held[_IFLAG] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.IXOFF)
    held[_CC][termios.VMIN], held[_CC][termios.VTIME] = 1, 0
    return held


class _KeyReader:
    """A thread that, after the grace, reads the terminal ``keys`` for q until stopped, keeping the rest
    in ``typed``."""

    def __init__(self, keys: int, typed: bytearray) -> None:
        self._keys = keys
        self.typed = typed
        self._lock = threading.Lock()  # between taking the terminal and stopping
        self._stopping = threading.Event()
        self._saved: list[Any] | None = None  # the terminal's modes, while they are ours
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="gputop-keys", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread and put the terminal's modes back."""
        with self._lock:
            self._stopping.set()
        os.write(self._wake_write, b"\0")
        self._thread.join()
        for descriptor in (self._wake_read, self._wake_write):
            os.close(descriptor)
        self._restore()

    def _run(self) -> None:
        if self._stopping.wait(GRACE_S):
            return
        with self._lock:
            if self._stopping.is_set():
                return
            try:
                saved = termios.tcgetattr(self._keys)
                termios.tcsetattr(self._keys, termios.TCSANOW, _held_modes(saved))
            except termios.error:
                return
            self._saved = saved
        recent = b""
        while True:
            try:
                ready, _, _ = select.select([self._keys, self._wake_read], [], [])
                if self._wake_read in ready:
                    return
                data = os.read(self._keys, 64)
            except OSError:  # the terminal went away: nothing more to read
                return
            if not data:
                return
            recent = (recent + data)[-8:]  # F10 may come in two reads
            if any(key in recent for key in QUIT_KEYS):
                # From this thread: the main one is waiting on the driver, for as long as it hangs.
                self._restore()
                os._exit(QUIT_STATUS)
            self.typed += data

    def _restore(self) -> None:
        saved, self._saved = self._saved, None
        if saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self._keys, termios.TCSANOW, saved)


@contextlib.contextmanager
def quit_keys(enabled: bool = True, typed: bytearray | None = None) -> Iterator[None]:
    """Within the block, q quits at once (once the block has lasted GRACE_S); the terminal is as it was after it.

    The other keys read meanwhile are added to ``typed``, as the terminal sent them (dropped without it).
    """
    keys = _terminal_keys() if enabled else None
    reader = None if keys is None else _KeyReader(keys, bytearray() if typed is None else typed)
    try:
        yield
    finally:
        if reader is not None:
            reader.stop()


def _terminal_keys() -> int | None:
    """The file descriptor of standard input when it is a terminal."""
    try:
        return sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
    except (OSError, ValueError):  # closed, or not a real file
        return None


class KeyHold:
    """The terminal's modes as they were before the keys were held, and how to give them back."""

    def __init__(self, keys: int, saved: list[Any]) -> None:
        self._keys, self._saved = keys, saved

    def give_back(self) -> None:
        """Put the terminal's modes back as they were (again, if they are already)."""
        with contextlib.suppress(termios.error):
            termios.tcsetattr(self._keys, termios.TCSANOW, self._saved)


@contextlib.contextmanager
def holding_keys(enabled: bool = True) -> Iterator[KeyHold | None]:
    """Within the block, keys typed wait unechoed and unchanged in the terminal's queue; as it was after it.

    None when standard input is no terminal (nothing to hold). Ctrl+C still interrupts.
    """
    keys = _terminal_keys() if enabled else None
    if keys is None:
        yield None
        return
    try:
        saved = termios.tcgetattr(keys)
        termios.tcsetattr(keys, termios.TCSANOW, _held_modes(saved))
    except termios.error:
        yield None
        return
    hold = KeyHold(keys, saved)
    try:
        yield hold
    finally:
        hold.give_back()
