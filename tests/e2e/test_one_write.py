"""The real gputop in a pseudo-terminal that has synchronized output (mode 2026): each frame reaches the
terminal's output thread in one write, its synchronized-update marks around it, where Textual writes three
(the start mark, the frame, the end mark), each of which wakes that thread."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from . import ptyterm  # noqa: E402 - needs pyte
from .ptyterm import PtyTerminal  # noqa: E402

SYNC_START, SYNC_END = "\x1b[?2026h", "\x1b[?2026l"
# gputop with every write its terminal's output thread is handed kept, in order, in a file (JSON lines).
RUN = """
import json, os
from textual.drivers import _writer_thread
from gputop.cli.main import main

kept = open(os.environ["WRITES_FILE"], "a", buffering=1)
write = _writer_thread.WriterThread.write

def counted(self, text):
    kept.write(json.dumps(text) + "\\n")
    return write(self, text)

_writer_thread.WriterThread.write = counted
raise SystemExit(main())
"""


def test_each_frame_reaches_the_terminal_in_one_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The terminal says it has synchronized output when asked (DECRQM 2026: set, may be reset).
    monkeypatch.setitem(ptyterm._QUERIES, b"\x1b[?2026$p", b"\x1b[?2026;2$y")
    writes_file = tmp_path / "writes"
    command = [sys.executable, "-c", RUN, "--demo", "--demo-gpus", "2", "--interval", "0.2"]
    terminal = PtyTerminal(command, dict(os.environ) | {"WRITES_FILE": str(writes_file)}, 120, 40)
    try:
        terminal.wait_for("the cards and processes", lambda s: "NVIDIA H100" in s and "python" in s)
        for _ in range(10):  # a few ticks, each a frame
            terminal.pump(0.1)
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    writes = [json.loads(line) for line in writes_file.read_text().splitlines()]
    frames = [text for text in writes if SYNC_START in text or SYNC_END in text]
    assert len(frames) >= 5
    for text in frames:  # a frame's bytes between its marks, all in the one write
        assert text.startswith(SYNC_START) and text.endswith(SYNC_END) and len(text) > len(SYNC_START + SYNC_END)
