"""Hostile process names: what a user on a shared machine can put in argv, and how gputop must show it.

Any user can start a process whose command line holds terminal escape
sequences, markup, invalid UTF-8 or 10 KB of text; gputop runs as root and
shows it to other users. Each case is argv[0] of a real process, so it is the
start of the command line, which every view shows first.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class Hostile:
    name: str
    argv0: bytes
    shown: str  # what the screen must show (the start of the escaped text)


CASES = (
    Hostile("osc-title", b"\x1b]0;pwned\x07osc", "\\x1b]0;pwned\\x07osc"),
    Hostile("csi-clear", b"\x1b[2Jcsi-clear", "\\x1b[2Jcsi-clear"),
    Hostile("dcs", b"\x1bPdcs-pwned\x1b\\dcs", "\\x1bPdcs-pwned\\x1b\\dcs"),
    Hostile("c1-csi", "\x9b2Jc1-csi".encode(), "\\x9b2Jc1-csi"),
    Hostile("rich-markup", b"[bold red]boom[/]", "[bold red]boom[/]"),
    Hostile("click-action", b"[@click=app.quit]x[/]", "[@click=app.quit]x[/]"),
    Hostile("newline-tab", b"line\nnext\ttab", "line\\x0anext\\x09tab"),
    Hostile("invalid-utf8", b"bad\xff\xfeutf8", "bad\\udcff\\udcfeutf8"),
    Hostile("wide", "训练🚀模型".encode(), "训练🚀模型"),
    Hostile("combining", "ze\u0301\u0301\u0301ro".encode(), "ze\u0301\u0301\u0301ro"),
    Hostile("10kb", b"huge-" + b"W" * 10240, "huge-WWWW"),
)
# Raw bytes that must never reach the terminal: each would act, not show.
FORBIDDEN = (
    b"\x1b]0;pwned", b"pwned\x07", b"\x1b[2Jcsi", b"\x1bPdcs", b"\xc2\x9b2J", b"\x9b2J", b"\xff\xfe", b"line\nnext",
)


SLEEP = shutil.which("sleep") or "/bin/sleep"
ARGS = " 600"  # what follows argv[0] on the command line


def spawn(case: Hostile) -> subprocess.Popen[bytes]:
    """A real idle process (``sleep 600``) whose argv[0] is the hostile text."""
    return subprocess.Popen([case.argv0, ARGS.strip()], executable=SLEEP, stdin=subprocess.DEVNULL)


def wait_until_running(processes: list[subprocess.Popen[bytes]]) -> None:
    """Until each has exec'd (it is sleep now, not the forking Python)."""
    deadline = time.monotonic() + 10
    for process in processes:
        while psutil.Process(process.pid).name() != "sleep":
            assert time.monotonic() < deadline, "the hostile process never started"
            time.sleep(0.01)


def spawn_all() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes = [spawn(case) for case in CASES]
    try:
        wait_until_running(processes)
        yield processes
    finally:
        for process in processes:
            process.kill()
            process.wait()
