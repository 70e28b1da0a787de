"""gputop's keyboard reader sleeps until a key comes: Textual's wakes ten times a second to see
whether to stop. Keys, a lone Escape and the stop still arrive as with Textual's."""

from __future__ import annotations

import os
import pty
import sys
import threading
import time
import tty
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.drivers.linux_driver import LinuxDriver
from textual.events import Key
from textual.message import Message

from gputop.ui.terminal import textual_private
from gputop.ui.terminal.textual_private import quiet_input


def wake_ups(thread: threading.Thread) -> int:
    """How often ``thread`` has slept and been woken so far (the kernel's count)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("voluntary_ctxt_switches"))


class Reader:
    """A terminal driver's keyboard reader on a pty of its own, the keys it made kept in order."""

    def __init__(self, driver_class: type[LinuxDriver], master: int) -> None:
        keys: list[str] = []

        class Keeping(driver_class):  # type: ignore[valid-type,misc]
            def process_message(self, message: Message) -> None:
                if isinstance(message, Key):
                    keys.append(message.key)

        self.keys = keys
        self.master = master
        self.driver = Keeping(None, mouse=False)  # type: ignore[arg-type]
        self.start()

    def start(self) -> None:
        """Start reading, in a thread of its own, as the driver's ``start_application_mode`` does."""
        self.thread = threading.Thread(target=self.driver.run_input_thread, daemon=True)
        self.driver._key_thread = self.thread  # the thread Textual's disable_input stops and joins
        self.thread.start()

    def type(self, data: bytes, expected: list[str]) -> None:
        os.write(self.master, data)
        deadline = time.monotonic() + 2.0
        while self.keys != expected and time.monotonic() < deadline:
            time.sleep(0.01)
        assert self.keys == expected

    def wake_ups_in(self, seconds: float) -> int:
        before = wake_ups(self.thread)
        time.sleep(seconds)
        return wake_ups(self.thread) - before


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A pty whose far end is the drivers' stdin; yields the end the test types into."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # as the driver sets the terminal: each key as it comes, not a line at a time
    monkeypatch.setattr(sys, "__stdin__", os.fdopen(slave, "rb", buffering=0, closefd=False))
    yield master
    os.close(master)
    os.close(slave)


async def test_gputops_reader_sleeps_until_a_key_comes_and_still_reads_each_key(terminal: int) -> None:
    driver_class = quiet_input(LinuxDriver)
    assert driver_class is not LinuxDriver
    reader = Reader(driver_class, terminal)
    time.sleep(0.2)
    assert reader.wake_ups_in(1.0) <= 1
    reader.type(b"/b", ["slash", "b"])
    reader.type(b"\x1b", ["slash", "b", "escape"])  # a lone Escape is a key once the escape delay has passed
    reader.type(b"\x1b[A", ["slash", "b", "escape", "up"])
    time.sleep(0.5)  # a key may still have been coming: it polls for a moment, then sleeps again
    assert reader.wake_ups_in(1.0) <= 1
    started = time.monotonic()
    reader.driver.disable_input()  # what Textual calls at exit and on Ctrl+Z: it returns once the reader stopped
    assert not reader.thread.is_alive()
    assert time.monotonic() - started < 0.5
    reader.driver.close()


async def test_textuals_own_reader_wakes_ten_times_a_second(terminal: int) -> None:
    """What the reader above saves, measured the same way (and the measure can see a wake-up)."""
    reader = Reader(LinuxDriver, terminal)
    time.sleep(0.2)
    assert reader.wake_ups_in(1.0) >= 5
    reader.type(b"/", ["slash"])
    reader.driver.disable_input()
    assert not reader.thread.is_alive()


async def test_the_reader_left_stopped_by_ctrl_z_starts_asleep_again(terminal: int) -> None:
    """A stop's wake-up left unread (the reader had already seen the stop) is not taken for the next stop."""
    driver_class = quiet_input(LinuxDriver)
    reader = Reader(driver_class, terminal)
    reader.driver.disable_input()
    assert not reader.thread.is_alive()
    os.write(reader.driver.reader_pipe[1], b"\0")  # as if the stop's wake-up came after the reader had gone
    reader.start()  # resumed
    time.sleep(0.3)
    assert reader.wake_ups_in(1.0) <= 1
    reader.type(b"q", ["q"])
    reader.driver.disable_input()
    assert not reader.thread.is_alive()
    reader.driver.close()


def test_a_textual_whose_parser_changed_keeps_its_own_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    class Parser:  # as a Textual whose parser lost its tick would have it
        def __init__(self, debug: bool = False) -> None:
            self.debug = debug

        def feed(self, data: str) -> list[Message]:
            return []

    monkeypatch.setattr(textual_private, "XTermParser", Parser)
    assert textual_private._parser_shape() == "XTermParser.tick is missing"
    assert quiet_input(LinuxDriver) is LinuxDriver
