"""Run a terminal program in a pseudo-terminal and measure what it costs.

Used by the overhead benchmark: CPU seconds of the whole process tree, peak RSS,
bytes written to the terminal, and when given strings first appeared on screen.
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
from collections.abc import Sequence
from dataclasses import dataclass, field

import psutil


@dataclass
class PtyRun:
    command: list[str]
    seconds: float
    cpu_seconds: float = 0.0
    peak_rss: int = 0
    bytes_written: int = 0
    bytes_after_warmup: int = 0
    first_seen: dict[str, float] = field(default_factory=dict)
    exit_status: int | None = None

    @property
    def cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.seconds

    def bytes_per_second(self, warmup_s: float) -> float:
        return self.bytes_after_warmup / max(1e-9, self.seconds - warmup_s)


def _tree(process: psutil.Process) -> list[psutil.Process]:
    try:
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return [process]


def run_in_pty(
    command: Sequence[str],
    seconds: float,
    columns: int = 120,
    rows: int = 40,
    env: dict[str, str] | None = None,
    watch: Sequence[str] = (),
    warmup_s: float = 3.0,
    quit_keys: bytes = b"q",
) -> PtyRun:
    """Run ``command`` for ``seconds`` in a ``columns`` x ``rows`` pty; measure it, then quit it."""
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
    seen = b""
    cpu_by_pid: dict[int, float] = {}
    last_poll = 0.0
    try:
        while (now := time.monotonic()) - start < seconds:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                result.bytes_written += len(chunk)
                if now - start >= warmup_s:
                    result.bytes_after_warmup += len(chunk)
                if len(result.first_seen) < len(watch):
                    seen = (seen + chunk)[-1_000_000:]
                    for text in watch:
                        if text not in result.first_seen and text.encode() in seen:
                            result.first_seen[text] = time.monotonic() - start
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
        for member in _tree(process):
            try:
                times = member.cpu_times()
                cpu_by_pid[member.pid] = times.user + times.system
            except psutil.Error:
                pass
        result.cpu_seconds = sum(cpu_by_pid.values())
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
