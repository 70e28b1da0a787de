"""Enter and k on a launcher's line in the tree of the demo or a replay: the line is made from what its
workers say, there is no process behind it, and the notice says so (the demo, a recording) and names
what to do instead; nothing opens, nothing is signalled."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from gputop.core.recording.record import Recorder, read_recording
from gputop.core.recording.replay import Replay
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource
from gputop.core.sources.recorded import ReplaySource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.kill import KillScreen, LauncherChoiceScreen
from gputop.ui.screens.process import ProcessScreen

from .factory import demo_snapshots, notices

PICK = "select one of its workers"


async def on_the_launcher(app: GpuTopApp, pilot: Pilot[int]) -> str:
    """Tree on, cursor on the launcher's line (the user moves down to it); its PID and name."""
    await pilot.press("t")
    await pilot.pause()
    for _ in range(len(app.processes.rows)):
        row = app.processes.cursor_row
        if row is not None and row.launcher:
            break
        await pilot.press("down")
    row = app.processes.cursor_row
    assert row is not None and row.launcher and row.process.started is None
    return f"PID {row.process.pid} ({row.process.name})"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_in_the_demo_a_launcher_cannot_be_opened_or_signalled_and_says_why(size: tuple[int, int]) -> None:
    app = GpuTopApp(Sampler(DemoSource(gpu_count=2, seed=7)), RunConfig(), start_sampler=False)
    async with app.run_test(size=size) as pilot:
        for snapshot in demo_snapshots(2, 3):
            app.apply_snapshot(snapshot)
        await pilot.pause()
        launcher = await on_the_launcher(app, pilot)
        assert launcher.endswith("(torchrun)")
        why = "the demo simulates its workers, not the launcher (there is no such process)"
        await pilot.press("enter")
        assert not isinstance(app.screen, ProcessScreen)
        assert notices(app)[-1] == f"{launcher} cannot be read from here: {why}; {PICK}"
        await pilot.press("k")
        assert not isinstance(app.screen, KillScreen | LauncherChoiceScreen)
        assert notices(app)[-1] == f"{launcher} not signalled: {why}; {PICK}"
        await pilot.press("down", "enter")  # its first worker: a simulated process, with a screen
        assert isinstance(app.screen, ProcessScreen)


async def test_in_a_replay_a_launcher_cannot_be_opened_and_nothing_is_signalled(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    recorder = Recorder(str(path))
    for snapshot in demo_snapshots(2, 3):
        recorder.write(snapshot)
    recorder.close()
    replay = Replay(read_recording(str(path)), paused=True)
    app = GpuTopApp(Sampler(ReplaySource(replay)), RunConfig(), replay=replay)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        launcher = await on_the_launcher(app, pilot)
        await pilot.press("enter")
        assert not isinstance(app.screen, ProcessScreen)
        assert notices(app)[-1] == (
            f"{launcher} cannot be read from here: a recording holds its workers, nothing of the launcher"
            f" (there is no such process here); {PICK}"
        )
        await pilot.press("k")
        assert not isinstance(app.screen, KillScreen | LauncherChoiceScreen)
        assert notices(app)[-1] == "a recording: gputop sends no signals"
