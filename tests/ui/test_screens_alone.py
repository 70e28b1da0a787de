"""The process and detail screens built without gputop's app: each shows only the ticks it is handed, reads
only the LiveData it is given, and calls only the kill functions and the detail opener it is given (issue 23
item 1; issue 36: handed ticks, no function of the app's to read the data from)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.screen import Screen

from gputop.core.analysis.diagnosis.diagnoser import NO_DIAGNOSES
from gputop.core.analysis.forecast import Forecast, Forecasts
from gputop.core.analysis.foresight import Foresight
from gputop.core.analysis.history import History
from gputop.core.analysis.tick_feed import Tick
from gputop.core.host.procdetail import ProcessDetail
from gputop.core.model import ProcessIdentity
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.live_data import LiveData
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.rows import ProcessRow

from .factory import GIB, NOW, gpu, proc, snapshot

CSS = Path(__file__).resolve().parents[2] / "gputop" / "ui" / "gputop.tcss"
WORKER = proc(101, 1, 2.0, command="python train.py", started=NOW - 60)
LAUNCHER = proc(100, 1, 0.0, command="torchrun train.py", started=NOW - 90)
SNAPSHOT = snapshot(gpu(0), gpu(1, [WORKER]))


class Host(App[None]):
    """A bare app that opens one screen: no sampler, no panel, no GpuTopApp."""

    CSS_PATH = str(CSS)

    def __init__(self, screen: Screen[None]) -> None:
        super().__init__()
        self.opened = screen

    def on_mount(self) -> None:
        self.push_screen(self.opened)


class Kill:
    """What the process screen's k may call, recorded."""

    def __init__(self, refusal: str | None = None) -> None:
        self.refusal = refusal
        self.calls: list[tuple[object, ...]] = []

    def ask_launcher(self, launcher: ProcessRow, below: list[ProcessRow]) -> None:
        self.calls.append(("ask_launcher", launcher.process.pid, [row.process.pid for row in below]))

    def send(self, identities: list[ProcessIdentity], signal_number: int) -> None:
        self.calls.append(("send", identities, signal_number))

    def refuse(self) -> None:
        self.calls.append(("refuse",))


NOTHING_FORESEEN = Forecasts(gpus={}, migs={}, processes={})


def tick(forecasts: Forecasts = NOTHING_FORESEEN) -> Tick:
    """A tick of SNAPSHOT, with these forecasts, no diagnosis and no alert."""
    return Tick(SNAPSHOT, Foresight(forecasts, NO_DIAGNOSES, ()), frozenset())


def data(read: list[ProcessIdentity] | None = None) -> LiveData:
    """What the screens read besides the ticks: each host-facts read noted in ``read``."""

    def process_detail(identity: ProcessIdentity) -> ProcessDetail:
        if read is not None:
            read.append(identity)
        return ProcessDetail(identity[0], arguments=("torchrun", "--nproc", "8", "train.py"), user="alice")

    return LiveData(history=History(), process_detail=process_detail)


def shown(app: App[None]) -> str:
    """What the terminal shows now."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


async def test_k_on_a_launcher_asks_the_given_kill_about_it_and_its_workers_or_the_refusal_speaks() -> None:
    launcher = ProcessRow(process=LAUNCHER, gpu_memory_total=None, now=NOW, launcher=True)
    worker = ProcessRow(process=WORKER, gpu_memory_total=80 * GIB, now=NOW, guide="└─")
    opened: list[int] = []
    for refusal, expected in ((None, [("ask_launcher", 100, [101])]), ("a recording", [("refuse",)])):
        kill, read = Kill(refusal), []
        screen = ProcessScreen(
            LAUNCHER.identity, data=data(read=read), tick=tick(), kill=kill, gpu_detail=opened.append,
            launcher=launcher, below=[worker],
        )
        app = Host(screen)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "no GPU: launcher of 1 GPU process" in shown(app)
            assert "torchrun --nproc 8 train.py" in shown(app)  # the given reader's facts
            await pilot.press("k")
            assert kill.calls == expected
            await pilot.press("g")  # a launcher is on no GPU: no detail to open
        assert read == [LAUNCHER.identity]
    assert opened == []


async def test_g_opens_the_detail_of_the_process_s_gpu_through_the_given_function() -> None:
    opened: list[int] = []
    screen = ProcessScreen(WORKER.identity, data=data(), tick=tick(), kill=Kill(), gpu_detail=opened.append)
    app = Host(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "GPU 1" in shown(app)
        await pilot.press("g")
        assert opened == [1]


async def test_the_detail_header_says_when_memory_fills_from_the_forecasts_it_is_given_each_tick() -> None:
    filling = Forecasts(gpus={1: Forecast(seconds_to_full=190.0, growth_rate=GIB)}, migs={}, processes={})
    screen = DetailScreen(1, data(), tick(filling))
    app = Host(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "full in ~3m10s" in shown(app)
        screen.show(tick())  # the next tick's: nothing fills
        await pilot.pause()
        assert " GPU 1 " in shown(app)
        assert "full in" not in shown(app)
