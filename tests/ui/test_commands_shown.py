"""Commands you can tell apart: the program's base name, its script and arguments, in the panel, the
tree and the kill dialog (the interpreter's path only on the process screen)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.process import ProcessScreen

from .factory import gpu, kill_targets, make_app, proc, screen_text, snapshot

PYENV = "/home/alice/.pyenv/versions/3.11.7/bin/python3"
TORCHRUN = f"{PYENV} /home/alice/.pyenv/versions/3.11.7/bin/torchrun --nproc-per-node 2 train.py"


def ranks_snapshot():  # type: ignore[no-untyped-def]
    """Two ranks of one torchrun job, each started by the pyenv interpreter."""

    def rank(pid: int, index: int, gib: float):  # type: ignore[no-untyped-def]
        worker = proc(pid, index, gib, command=f"{PYENV} train.py --local-rank {index}")
        return replace(worker, name="python3", parent_pid=400, parent_command=TORCHRUN)

    return snapshot(gpu(0, [rank(401, 0, 30)]), gpu(1, [rank(402, 1, 20)]))


def panel_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    table = app.processes
    return ["".join(s.text for s in table.render_line(y)).rstrip() for y in range(1, len(table.rows) + 1)]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_panel_tree_and_kill_dialog_tell_the_ranks_apart(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(ranks_snapshot())
        await pilot.pause()
        lines = panel_lines(app)
        # At 80 columns the command is cut in the middle, so each rank's number stays on screen.
        ends = ["…al-rank 0", "…al-rank 1"] if size[0] == 80 else [" --local-rank 0", " --local-rank 1"]
        assert lines[0].endswith(" python3 train.py" + ends[0])
        assert lines[1].endswith(" python3 train.py" + ends[1])
        assert ".pyenv" not in screen_text(app)
        await pilot.press("t")  # the tree: the launcher by its console script's name
        lines = panel_lines(app)
        assert "  400 alice" in lines[0] and " torchrun --nproc" in lines[0] and lines[0].endswith(" train.py")
        assert "├─ python3 train" in lines[1] and lines[1].endswith("rank 0")
        assert "└─ python3 train" in lines[2] and lines[2].endswith("rank 1")
        assert ".pyenv" not in screen_text(app)
        await pilot.press("down", "down", "k")
        assert isinstance(app.screen, KillScreen)
        # At 80 columns the dialog has 72 cells: the command is cut in the middle, the rank stays.
        command = "python3 train.py …al-rank 1" if size == (80, 24) else "python3 train.py --local-rank 1"
        assert kill_targets(app) == f"PID 402     alice        GPU 1      20.0GiB  {command}"
        if size != (80, 24):
            return
        await pilot.press("escape", "enter")  # the process screen: the command line as it is
        assert isinstance(app.screen, ProcessScreen)
        assert f"│ Command    {PYENV} train.py" in screen_text(app)
