"""SVG snapshots of the main screen, driven by the deterministic demo machine (fixed clock, fixed host)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from gputop.core.sources.demo import DemoSource
from gputop.ui.app import GpuTopApp

from .factory import demo_snapshots, gpu, make_app, proc, snapshot


def feed(app: GpuTopApp, gpu_count: int, ticks: int) -> Callable[[Pilot[int]], Any]:
    snapshots = demo_snapshots(gpu_count, ticks)

    async def run_before(pilot: Pilot[int]) -> None:
        for one in snapshots:
            app.apply_snapshot(one)
        await pilot.pause()
        # The screen under test, not the alert toasts of the ticks fed to reach it.
        app.clear_notifications()
        await pilot.pause()

    return run_before


def test_main_screen_4_gpus_120x40(snap_compare: Any) -> None:
    app = make_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=feed(app, 4, 60))


def test_main_screen_4_gpus_80x24(snap_compare: Any) -> None:
    app = make_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=feed(app, 4, 60))


def test_main_screen_8_gpus_120x40(snap_compare: Any) -> None:
    app = make_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=feed(app, 8, 60))


def test_kill_dialog_120x40(snap_compare: Any) -> None:
    app = make_app()
    run = feed(app, 4, 5)

    async def run_before(pilot: Pilot[int]) -> None:
        await run(pilot)
        await pilot.press("space", "space", "k")

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_lost_gpu_and_hidden_process_120x40(snap_compare: Any) -> None:
    app = make_app()

    async def run_before(pilot: Pilot[int]) -> None:
        app.apply_snapshot(
            snapshot(gpu(0, [proc(4242, 0, 30, "alice", "python train.py"), proc(77, 0, 2, visible=False)]),
                     gpu(1, lost=True))
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_demo_source_is_deterministic() -> None:
    first = [s.gpus for s in demo_snapshots(2, 3)]
    assert first == [s.gpus for s in demo_snapshots(2, 3)]
    assert DemoSource(gpu_count=2).name == "demo"
