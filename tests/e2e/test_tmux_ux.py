"""What a user feels, in the real ``gputop --demo`` in tmux at 80x24: Enter shows a process whole,
t the tree, Tab and Enter a GPU's detail, a missing GPU's digit is refused in words.
(q and its exit status: test_tmux.py. The same screens at 120x40 as well as 80x24, cell by cell:
the SVG snapshots in tests/ui/test_snapshots.py; this flow ran at both sizes until they came,
17 s of the serial run each.)"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_tmux import Tmux, filter_box_closed

# The tmux tests run on their own after the parallel run (README's test command): beside three
# busy xdist workers on a 2-core machine their screens came up wrong (80x24) or late.
pytestmark = [
    pytest.mark.skipif(not Tmux.available(), reason="needs tmux (apt-get install -y tmux)"),
    pytest.mark.serial,
]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    session = Tmux(tmp_path, dict(os.environ) | {"TERM": "xterm-256color"})
    yield session
    session.kill_server()


def test_a_process_in_full_the_tree_a_gpu_and_a_refused_digit(tmux: Tmux) -> None:
    tmux.start([sys.executable, "-m", "gputop", "--demo", "--interval", "0.5"], (80, 24))
    tmux.wait_for("the process panel", lambda s: "Processes 1" in s and "Enter Process" in s)

    tmux.keys("Enter")  # the selected process: the largest, vLLM
    # Messages take the footer's row only: the command shows whole at once.
    screen = tmux.wait_for(
        "the process screen",
        lambda s: "Command" in s and "python -m vllm.entrypoints.openai.api_server" in s and "Esc Back" in s,
    )
    assert screen.splitlines()[0].startswith(" PID ")
    tmux.keys("Escape")
    tmux.wait_for("the main screen", lambda s: "Enter Process" in s)

    tmux.keys("t")
    tmux.wait_for(
        "the tree",
        lambda s: "tree" in s and "torchrun --nproc" in s and "├─ python -…--local-rank 0" in s
        and "└─ python -…--local-rank 1" in s,
    )

    tmux.keys("Tab")
    tmux.wait_for("the cards' footer", lambda s: "Enter GPU detail" in s.splitlines()[-1])
    tmux.keys("Enter")  # the first card
    tmux.wait_for("GPU 0's detail", lambda s: "GPU 0" in s.splitlines()[0] and "Esc Back" in s)
    tmux.keys("Escape")
    tmux.wait_for("the main screen", lambda s: "Enter GPU detail" in s.splitlines()[-1])

    tmux.keys("Escape")  # back to the panel (alone: Esc then 7 in one read would be Alt+7)
    tmux.wait_for("the panel's footer", lambda s: "Enter Process" in s.splitlines()[-1])
    tmux.keys("7")  # there is no GPU 7 on the demo's four
    tmux.wait_for("the refusal", lambda s: "there is no GPU 7" in s)
    assert filter_box_closed(tmux.screen(), "7")
