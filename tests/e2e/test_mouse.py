"""`--no-mouse`: the real command never asks the terminal for mouse reports (slow links)."""

from __future__ import annotations

import sys

from bench.ptyrun import run_in_pty

MOUSE_REPORTING = (b"\x1b[?1000h", b"\x1b[?1003h", b"\x1b[?1006h")


def terminal_output(*args: str) -> bytes:
    result = run_in_pty(
        [sys.executable, "-m", "gputop", "--demo", *args], seconds=30, columns=100, rows=30,
        watch={"processes": ["python train.py"]}, keep_output=True, until_seen=True,
    )
    assert "processes" in result.first_seen, result.last_screen
    assert result.exit_status == 0
    return bytes(result.output)


def test_the_mouse_is_reported_by_default_and_never_with_no_mouse() -> None:
    assert all(request in terminal_output() for request in MOUSE_REPORTING)
    quiet = terminal_output("--no-mouse")
    assert not any(request in quiet for request in MOUSE_REPORTING)
