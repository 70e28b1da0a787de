"""The tree (t, F5): workers under their launcher, GPU memory summed on the parent, sort and filter within."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.pilot import Pilot

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.kill import KillScreen

from .factory import gpu, kill_targets, make_app, notices, proc, screen_text, snapshot

TORCHRUN = "torchrun --nproc-per-node 2 pretrain.py"


def tree_snapshot():  # type: ignore[no-untyped-def]
    """GPU 0: 101 (alice, 40 GiB), worker 401 (10 GiB); GPU 1: worker 402 (12 GiB), 501 (bob, 6 GiB) and
    its helper 502 (2 GiB). 401 and 402 are torchrun 400's; 501 and 101 are started from a shell."""

    def child(pid: int, gpu_index: int, gib: float, parent: int, command: str, user: str = "alice"):  # type: ignore[no-untyped-def]
        return replace(proc(pid, gpu_index, gib, user, command), parent_pid=parent, parent_command=command_of(parent))

    def command_of(pid: int) -> str:
        return {400: TORCHRUN, 501: "python serve.py", 1: "/sbin/init"}.get(pid, "-bash")

    return snapshot(
        gpu(0, [
            child(101, 0, 40, 1, "python train.py"),
            child(401, 0, 10, 400, "python -u pretrain.py --local-rank 0"),
        ]),
        gpu(1, [
            child(402, 1, 12, 400, "python -u pretrain.py --local-rank 1"),
            child(501, 1, 6, 1, "python serve.py", "bob"),
            child(502, 1, 2, 501, "python serve_helper.py", "bob"),
        ]),
    )


def panel_lines(app: GpuTopApp) -> list[str]:
    table = app.processes
    return ["".join(s.text for s in table.render_line(y)).rstrip() for y in range(1, len(table.rows) + 1)]


async def started(app: GpuTopApp, pilot: Pilot[int]) -> None:
    app.apply_snapshot(tree_snapshot())
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_t_shows_workers_under_their_launcher_with_the_memory_summed(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        assert app.processes.pids() == [101, 402, 401, 501, 502]
        await pilot.press("t")
        assert app.processes.pids() == [101, 400, 402, 401, 501, 502]
        lines = panel_lines(app)
        # GPU-MEM of the launcher and of 501 is their subtree's: 12+10 and 6+2 GiB.
        assert "  400 alice" in lines[1] and "Σ22.0GiB" in lines[1] and " torchrun --nproc" in lines[1]
        # A worker's command is cut in the middle where it does not fit: its rank stays on screen.
        assert "402 alice" in lines[2] and " 12.0GiB" in lines[2] and " ├─ python -" in lines[2]
        assert "401 alice" in lines[3] and " 10.0GiB" in lines[3] and " └─ python -" in lines[3]
        assert lines[2].endswith("--local-rank 1") and lines[3].endswith("--local-rank 0")
        assert "Σ8.0GiB" in lines[4] and lines[4].endswith(" python serve.py")
        assert lines[5].endswith(" └─ python serve_helper.py")
        assert "Processes 5  tree" in screen_text(app)
        await pilot.press("f5")
        assert app.processes.pids() == [101, 402, 401, 501, 502]
        assert "tree" not in screen_text(app).split("Processes 5")[1].split("─")[0]


async def test_sort_and_filter_apply_within_the_tree() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("t", "I")  # smallest GPU memory first, within each level
        assert app.processes.pids() == [501, 502, 400, 401, 402, 101]
        await pilot.press("N")  # by PID
        assert app.processes.pids() == [101, 400, 401, 402, 501, 502]
        await pilot.press("slash", *"pretrain", "enter")
        assert app.processes.pids() == [400, 401, 402]
        await pilot.press("escape")
        await pilot.press("slash", *"rank 1", "enter")  # one worker left: its launcher's line still
        assert app.processes.pids() == [400, 402]


async def test_enter_and_k_on_a_launcher_not_read_from_proc_say_to_pick_a_worker() -> None:
    # Made from what its workers say (as in the demo or a recording): no start time, so no identity.
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("t", "down")
        assert app.processes.cursor_row is not None and app.processes.cursor_row.launcher
        await pilot.press("enter")
        why = (
            "its start time could not be read from /proc (gputop in another PID namespace, or the launcher has"
            " exited), so it cannot be told from a process that reused its PID; select one of its workers"
        )
        assert notices(app)[-1] == f"PID 400 (torchrun) cannot be read from here: {why}"
        await pilot.press("k")
        assert not isinstance(app.screen, KillScreen)
        assert notices(app)[-1] == f"PID 400 (torchrun) not signalled: {why}"
        await pilot.press("down", "k")  # worker 402
        assert isinstance(app.screen, KillScreen) and "PID 402" in kill_targets(app)
