"""SVG snapshots of every screen, driven by the deterministic demo machine (fixed clock, fixed host).

Each screen is reached as a user reaches it (its key), at 120x40 and 80x24. What could make a
picture depend on the run is pinned: the snapshots' clock (`factory.NOW`, one simulated second a
tick) sets the charts' time axis and the processes' ages, the time zone is UTC (the axis and the
start times are local times), and notifications are cleared before the picture is taken.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, Iterator
from typing import Any

import pytest
from textual.pilot import Pilot

from gputop.core.cluster.model import ClusterHost
from gputop.core.cluster.owners import FleetOwner
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource
from gputop.ui.app import GpuTopApp
from gputop.ui.cluster.owner_screen import FleetOwnerScreen
from gputop.ui.cluster.view import ClusterApp

from ..test_cluster_view import FakeReader
from ..test_cluster_view import make_app as make_cluster_app
from .factory import NOW, demo_snapshots, gpu, make_app, proc, snapshot

SIZES = [(120, 40), (80, 24)]
SIZE_IDS = ["120x40", "80x24"]


@pytest.fixture(autouse=True)
def pinned() -> Iterator[None]:
    """Local times (chart axes, start times) drawn in UTC, whatever the machine's zone.

    The charts' time labels need no pinning: they are far enough apart that plotext places each on
    the same cells whatever its hash-seeded order (tests/ui/test_history_chart_labels.py).
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


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


def demo_app() -> GpuTopApp:
    """An app whose source is the demo machine the snapshots come from, so the process screen
    reads its processes' facts; the test feeds the ticks, no sampler thread runs."""
    source = DemoSource(gpu_count=4, seed=7, clock=lambda: NOW)
    source.open()
    return GpuTopApp(Sampler(source), RunConfig(interval_s=1.0), start_sampler=False)


def screen_after(app: GpuTopApp, ticks: int, keys: tuple[str, ...]) -> Callable[[Pilot[int]], Awaitable[None]]:
    """Feed ``ticks`` ticks, press ``keys``, then feed one tick more: a screen's charts are drawn at
    their size on the tick after it is laid out, as in a live run."""
    *before, after = demo_snapshots(4, ticks + 1)
    shown = feed_these(app, before)

    async def run_before(pilot: Pilot[int]) -> None:
        await shown(pilot)
        await pilot.press(*keys)
        await app.workers.wait_for_complete()  # the process screen reads its facts on a worker
        await pilot.pause()
        app.apply_snapshot(after)
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()

    return run_before


def feed_these(app: GpuTopApp, snapshots: list[Any]) -> Callable[[Pilot[int]], Awaitable[None]]:
    async def run_before(pilot: Pilot[int]) -> None:
        for one in snapshots:
            app.apply_snapshot(one)
        await pilot.pause()

    return run_before


# g: the GPU of the selected process (the largest: GPU 1, stalled); F1: help; Enter: the selected
# process in full; t: the tree (torchrun's workers under it); o: the owners, by user.
SCREENS = {"detail": ("g",), "help": ("f1",), "process": ("enter",), "tree": ("t",), "owners": ("o",)}


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_each_screen_reached_by_its_key(snap_compare: Any, screen: str, size: tuple[int, int]) -> None:
    app = demo_app()
    assert snap_compare(app, terminal_size=size, run_before=screen_after(app, 40, SCREENS[screen]))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_cluster_view(snap_compare: Any, size: tuple[int, int]) -> None:
    app: ClusterApp = make_cluster_app(FakeReader())

    async def run_before(pilot: Pilot[int]) -> None:
        for _ in range(250):  # the first refresh and the memory history of the rows on screen
            if app.state is not None and len(app.fleet.host_list.history) == 3:
                break
            await pilot.pause(0.02)
        assert app.state is not None and len(app.fleet.host_list.history) == 3
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


GIB = 1024**3


class OwnedFleet(FakeReader):
    """The fake fleet, and who holds it by user (idle memory: some, none, not served)."""

    def owners(self, kind: str, hosts: Collection[ClusterHost]) -> list[FleetOwner]:
        def row(name: str, hosts: int, gpus: int, gib: float | None, idle_gib: float | None,
                processes: int | None) -> FleetOwner:
            return FleetOwner(name=name, hosts=hosts, gpus=gpus, gpu_memory=None if gib is None else int(gib * GIB),
                              memory_share=None if gib is None else gib / 640,
                              idle_memory=None if idle_gib is None else int(idle_gib * GIB), processes=processes)

        return [row("alice", 2, 5, 310, 0, 6), row("bob", 2, 2, 74.5, 60, 3), row("carol", 1, 1, 8, None, 1)]


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_cluster_owner_screen(snap_compare: Any, size: tuple[int, int]) -> None:
    app: ClusterApp = make_cluster_app(OwnedFleet())

    async def run_before(pilot: Pilot[int]) -> None:
        for _ in range(250):
            if app.state is not None:
                break
            await pilot.pause(0.02)
        await pilot.press("o")
        for _ in range(250):
            if isinstance(app.screen, FleetOwnerScreen) and len(app.screen.rows) == 3:
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, FleetOwnerScreen) and len(app.screen.rows) == 3
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
