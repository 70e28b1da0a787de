"""The real gputop in a pseudo-terminal when the changed-cell writer cannot be used: Textual's own
output takes over, the app keeps running, and only ``--debug`` says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

# gputop with the writer counted (how many frames it was asked for, in a file) and, on request,
# failing at frame FAIL_AT or with its start-up check failing.
RUN = """
import os
from pathlib import Path
from gputop.cli.main import main
from gputop.ui.terminal import textual_private

calls = Path(os.environ["CALLS_FILE"])
changed_cells = textual_private.changed_cells

def counted(diff, frame, console, size):
    count = int(calls.read_text() or 0) + 1 if calls.exists() else 1
    calls.write_text(str(count))
    if count == int(os.environ.get("FAIL_AT", "0")):
        raise RuntimeError("the writer broke")
    return changed_cells(diff, frame, console, size)

textual_private.changed_cells = counted
if "CHECK_FAILS" in os.environ:
    textual_private.check_internals = lambda: os.environ["CHECK_FAILS"]
raise SystemExit(main())
"""


def _gputop(tmp_path: Path, *options: str, **env: str) -> tuple[PtyTerminal, Path]:
    calls = tmp_path / "calls"
    command = [sys.executable, "-c", RUN, "--demo", "--demo-gpus", "2", "--interval", "0.2", *options]
    return PtyTerminal(command, dict(os.environ) | env | {"CALLS_FILE": str(calls)}, 120, 40), calls


def _cards_and_processes(screen: str) -> bool:
    return "NVIDIA H100" in screen and "python" in screen


def test_a_writer_that_raises_hands_over_to_textual_and_debug_says_so(tmp_path: Path) -> None:
    terminal, calls = _gputop(tmp_path, "--debug", FAIL_AT="5")
    try:
        terminal.wait_for("the notice", lambda s: "Full redraw" in s and "failed (RuntimeError: the writer" in s)
        assert calls.read_text() == "5"
        terminal.type(b"p")  # hide the process panel: Textual draws the change
        terminal.wait_for("the panel gone", lambda s: "NVIDIA H100" in s and "Processes" not in s)
        terminal.type(b"p")
        terminal.wait_for("the panel back", lambda s: "Processes" in s)
        assert calls.read_text() == "5", "the writer was asked again after it failed"
        assert terminal.alive()
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
        assert b"Traceback" not in bytes(terminal.raw)
    finally:
        terminal.close()


@pytest.mark.parametrize(
    ("options", "env"),
    [((), {"CHECK_FAILS": "LayoutUpdate.__init__ is missing"}), (("--full-redraw",), {})],
    ids=["start-up check fails", "--full-redraw"],
)
def test_without_the_writer_textual_draws_every_frame_and_nothing_is_said(
    tmp_path: Path, options: tuple[str, ...], env: dict[str, str]
) -> None:
    terminal, calls = _gputop(tmp_path, *options, **env)
    try:
        terminal.wait_for("the cards and processes", _cards_and_processes)
        terminal.type(b"p")
        terminal.wait_for("the panel gone", lambda s: "NVIDIA H100" in s and "Processes" not in s)
        assert not calls.exists(), "the writer was used"
        assert "Full redraw" not in terminal.text()
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
