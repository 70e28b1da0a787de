"""`--no-mouse`: the real command never asks the terminal for mouse reports (slow links)."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import full_demo_screen, output_until  # noqa: E402 - needs pyte

MOUSE_REPORTING = (b"\x1b[?1000h", b"\x1b[?1003h", b"\x1b[?1006h")


def terminal_output(*args: str) -> bytes:
    command = [sys.executable, "-m", "gputop", "--demo", *args]
    return output_until(command, dict(os.environ), "the processes", full_demo_screen)


def test_the_mouse_is_reported_by_default_and_never_with_no_mouse() -> None:
    assert all(request in terminal_output() for request in MOUSE_REPORTING)
    quiet = terminal_output("--no-mouse")
    assert not any(request in quiet for request in MOUSE_REPORTING)
