"""Run a terminal program in a pseudo-terminal and measure what it costs.

Used by the overhead benchmark: CPU seconds of the whole process tree, peak RSS,
bytes written to the terminal, and when given strings first appeared on screen.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import psutil
import pyte


@dataclass
class PtyRun:
    command: list[str]
    seconds: float
    cpu_seconds: float = 0.0
    peak_rss: int = 0
    bytes_written: int = 0
    bytes_after_warmup: int = 0
    first_seen: dict[str, float] = field(default_factory=dict)
    # CPU seconds of the tree when the first of ``steady_after`` was seen: the start-up is over
    cpu_at_first_frame: float | None = None
    # CPU seconds of the tree, and when, at the first poll after the warm-up: what it costs once running
    cpu_at_warmup: float | None = None
    at_warmup: float | None = None
    exit_status: int | None = None
    last_screen: str = ""
    output: bytearray = field(default_factory=bytearray)  # every byte written, when keep_output

    @property
    def cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.seconds

    @property
    def steady_cpu_percent(self) -> float | None:
        """% of one core from the first frame to the end: what the monitor costs once running."""
        seen = self.first_seen.get("gpu")
        if self.cpu_at_first_frame is None or seen is None or self.seconds - seen < 1:
            return None
        return 100.0 * (self.cpu_seconds - self.cpu_at_first_frame) / (self.seconds - seen)

    @property
    def running_cpu_percent(self) -> float | None:
        """% of one core from the end of the warm-up to the end: the same window for every monitor.

        A monitor that draws a first frame before its full screen has loaded (gputop does) counts
        that loading in ``steady_cpu_percent``; this figure leaves every monitor's start-up out.
        """
        if self.cpu_at_warmup is None or self.at_warmup is None or self.seconds - self.at_warmup < 1:
            return None
        return 100.0 * (self.cpu_seconds - self.cpu_at_warmup) / (self.seconds - self.at_warmup)

    def bytes_per_second(self, warmup_s: float) -> float:
        return self.bytes_after_warmup / max(1e-9, self.seconds - warmup_s)


_XTGETTCAP = re.compile(rb"\x1bP\+q([0-9a-fA-F;]*)")
_DEVICE_ATTRIBUTES = b"\x1b[c"
_CURSOR_POSITION = b"\x1b[6n"


def _answer_queries(master: int, chunk: bytes) -> None:
    """Answer what a real terminal would, so a program that asks does not wait for ever.

    XTGETTCAP (DCS + q) gets "not known"; device attributes a VT220's answer; the cursor is at 1;1.
    """
    replies = [b"\x1bP0+r" + name + b"\x1b\\" for name in _XTGETTCAP.findall(chunk)]
    if _DEVICE_ATTRIBUTES in chunk:
        replies.append(b"\x1b[?62;22c")
    if _CURSOR_POSITION in chunk:
        replies.append(b"\x1b[1;1R")
    if replies:
        with contextlib.suppress(OSError):
            os.write(master, b"".join(replies))


def _child_pids(pid: int) -> list[int]:
    """Children of ``pid``, from /proc/PID/task/*/children."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
    return found


def _tree(process: psutil.Process) -> list[psutil.Process]:
    """The process and its descendants.

    psutil's children(recursive=True) reads every process on the machine: with the
    benchmark's 1024 sleepers that is 175 ms a call, most of a core at five calls a
    second, taken from the monitors being measured. The kernel's children lists are cheap.
    """
    if os.path.exists(f"/proc/{process.pid}/task/{process.pid}/children"):
        members, pending = [process], [process.pid]
        while pending:
            for child in _child_pids(pending.pop()):
                with contextlib.suppress(psutil.Error):
                    members.append(psutil.Process(child))
                    pending.append(child)
        return members
    try:
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return [process]


def _tree_cpu(process: psutil.Process, cpu_by_pid: dict[int, float]) -> float:
    """CPU seconds of the tree now (children that ended keep their last figure in ``cpu_by_pid``)."""
    for member in _tree(process):
        try:
            times = member.cpu_times()
            cpu_by_pid[member.pid] = times.user + times.system
        except psutil.Error:
            pass
    return sum(cpu_by_pid.values())


def run_in_pty(
    command: Sequence[str],
    seconds: float,
    columns: int = 120,
    rows: int = 40,
    env: dict[str, str] | None = None,
    watch: dict[str, list[str]] | None = None,
    warmup_s: float = 3.0,
    quit_keys: bytes = b"q",
    keep_output: bool = False,
    keys: Sequence[tuple[float, bytes]] = (),
    until_seen: bool = False,
) -> PtyRun:
    """Run ``command`` for ``seconds`` in a ``columns`` x ``rows`` pty; measure it, then quit it.

    ``watch`` maps a label to strings: ``first_seen[label]`` is when the first of them was written.
    ``keys`` are typed at the given seconds after the start. ``until_seen``: stop as soon as every
    label of ``watch`` was seen (``seconds`` is then the most to wait).
    """
    wanted = watch or {}
    screen = pyte.Screen(columns, rows)
    stream = pyte.ByteStream(screen)
    result = PtyRun(list(command), seconds)
    pid, master = pty.fork()
    if pid == 0:  # the child
        os.environ.update(env or {})
        os.environ["TERM"] = os.environ.get("TERM", "xterm-256color")
        os.execvp(command[0], list(command))
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    process = psutil.Process(pid)
    start = time.monotonic()
    cpu_by_pid: dict[int, float] = {}
    last_poll = 0.0
    to_type = sorted(keys)
    try:
        while (now := time.monotonic()) - start < seconds:
            while to_type and now - start >= to_type[0][0]:
                os.write(master, to_type.pop(0)[1])
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                result.bytes_written += len(chunk)
                if keep_output:
                    result.output += chunk
                _answer_queries(master, chunk)
                if now - start >= warmup_s:
                    result.bytes_after_warmup += len(chunk)
                stream.feed(chunk)
                if len(result.first_seen) < len(wanted):
                    # Look at the screen as a terminal would show it, not at the raw bytes.
                    shown = "\n".join(screen.display)
                    for label, texts in wanted.items():
                        if label not in result.first_seen and any(text in shown for text in texts):
                            result.first_seen[label] = time.monotonic() - start
                            if label == "gpu":
                                result.cpu_at_first_frame = _tree_cpu(process, cpu_by_pid)
                    if until_seen and len(result.first_seen) == len(wanted):
                        break
            if now - last_poll >= 0.2:
                last_poll = now
                for member in _tree(process):
                    try:
                        with member.oneshot():
                            times = member.cpu_times()
                            cpu_by_pid[member.pid] = times.user + times.system
                            result.peak_rss = max(result.peak_rss, member.memory_info().rss)
                    except psutil.Error:
                        pass
                if result.cpu_at_warmup is None and now - start >= warmup_s:
                    result.cpu_at_warmup, result.at_warmup = sum(cpu_by_pid.values()), now - start
        result.seconds = time.monotonic() - start  # the loop may end late on a loaded machine
        result.cpu_seconds = _tree_cpu(process, cpu_by_pid)
        result.last_screen = "\n".join(screen.display)
        os.write(master, quit_keys)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                result.exit_status = os.waitstatus_to_exitcode(status)
                break
            select.select([master], [], [], 0.05)
            with contextlib.suppress(OSError):
                os.read(master, 65536)
    finally:
        if result.exit_status is None:
            for member in _tree(process):
                with contextlib.suppress(psutil.Error):
                    member.kill()
            os.waitpid(pid, 0)
        os.close(master)
    return result
