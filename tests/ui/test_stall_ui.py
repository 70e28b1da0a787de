"""The app on a fake driver that hangs: the stuck GPU says so, everything else goes on, nothing waits.

The real sampler thread and the real nvidia-ml-py read the fake libnvidia-ml.so.1,
with a short driver deadline (0.4 s) and interval (0.2 s).
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest
from fakenvml import FakeNvml, GiB, Scenario
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from gputop.core.model import GpuSample, HostSample, Snapshot
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.nvml import NvmlSource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.title_bar import TitleBar

from .factory import newest

SIZE = (120, 40)
DEADLINE_S = 0.4
INTERVAL_S = 0.2
STUCK = f"nvmlDeviceGetMemoryInfo_v2 did not answer within {DEADLINE_S:g}s"


def machine(pid: int, util: int = 10) -> Scenario:
    return (
        Scenario()
        .gpu(name="NVIDIA H100 80GB HBM3", util_gpu=util, memory_used=3 * GiB)
        .gpu(name="NVIDIA L4", util_gpu=20, memory_used=5 * GiB)
        .process(gpu=1, pid=pid, used=2 * GiB)
    )


@pytest.fixture
def sleeper_pid() -> Iterator[int]:
    process = subprocess.Popen(["sleep", "600"])
    yield process.pid
    process.kill()
    process.wait()


@pytest.fixture
def sampler(fake_nvml: FakeNvml, sleeper_pid: int) -> Iterator[Sampler]:
    fake_nvml.write(machine(sleeper_pid))
    fake_nvml.load()
    real = Sampler(NvmlSource(deadline_s=DEADLINE_S))
    real.open()
    yield real
    real.close()


async def until(pilot: Pilot[int], what: str, check: Callable[[], bool], timeout_s: float = 10.0) -> float:
    """Pause until ``check`` holds; how long it took."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < timeout_s, f"timed out waiting for {what}"
        await pilot.pause(0.02)
    return time.monotonic() - started


def card(app: GpuTopApp, index: int) -> GpuCard:
    return app.query_one(f"#gpu-{index}", GpuCard)


def title(app: GpuTopApp, index: int) -> str:
    return Text.from_markup(str(card(app, index).border_title or "")).plain


def card_text(app: GpuTopApp, index: int) -> list[str]:
    return [line.plain for line in card(app, index)._lines]


def row_text(app: GpuTopApp, pid: int) -> str:
    table = app.processes
    return "".join(segment.text for segment in table.render_line(1 + table.pids().index(pid)))


async def test_a_hung_gpu_says_so_the_rest_goes_on_and_it_recovers_with_the_gap_kept(
    fake_nvml: FakeNvml, sampler: Sampler, sleeper_pid: int
) -> None:
    app = GpuTopApp(sampler, RunConfig(interval_s=INTERVAL_S))
    async with app.run_test(size=SIZE) as pilot:
        # The first sample comes from the sampler thread: the UI thread never waits on the driver.
        await until(pilot, "GPU 0 at 10%", lambda: bool(app.query("#gpu-0")) and "10%" in card_text(app, 0)[1])
        hang = time.time()
        fake_nvml.write(machine(sleeper_pid, util=60).stall(1, 60.0, "nvmlDeviceGetMemoryInfo", start=hang))

        await until(pilot, "GPU 1 not answering", lambda: "not answering" in title(app, 1))
        # Marked by the first tick that began after the hang (one interval, then the deadline): at most the
        # tick already under way when it began came between.
        history = app.history.gpu(1)
        after = [m for t, m in zip(history.timestamps, history.memory_used, strict=True) if t > hang]
        assert None in after[:2]
        assert re.fullmatch(r" 1  not answering \d+\.\ds NVIDIA L4 ", title(app, 1))
        assert card(app, 1).has_class("-silent")
        memory, util, temperature = card_text(app, 1)
        assert memory.startswith("MEM  ╌") and "N/A" in memory
        assert "N/A" in util and temperature.startswith("TEMP N/A")
        for y, line in enumerate(card_text(app, 1)):
            drawn = [segment.style for segment in card(app, 1).render_line(y) for _ in segment.text]
            assert all(style is not None and style.dim for style in drawn[: len(line.rstrip())])
        app.navigation.detail(1)
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        detail_title = app.screen.query_one("#detail-title", Static).content
        assert isinstance(detail_title, Text) and "not answering" in detail_title.plain
        await pilot.press("escape")
        # GPU 0, the host and the process panel go on at the interval meanwhile.
        await until(pilot, "GPU 0 at 60%", lambda: "60%" in card_text(app, 0)[1])
        assert newest(app) is not None and not newest(app).gpus[1].answering
        seen = newest(app).timestamp
        later = seen + 2.5 * INTERVAL_S
        await until(pilot, "three more ticks", lambda: newest(app) is not None and newest(app).timestamp > later)
        assert app.history.gpu(1).memory_used[-1] is None
        # Its process keeps its row, marked as last seen; signalling it, the dialog says the data is old.
        assert "(as last seen) sleep 600" in row_text(app, sleeper_pid)
        app.processes.cursor_key = app.processes.rows[app.processes.pids().index(sleeper_pid)].key
        await pilot.press("k")
        assert isinstance(app.screen, KillScreen)
        stale = app.screen.query_one("#kill-stale", Static).content
        assert str(stale) == (
            "⚠ Old data: GPU 1 is not answering; its rows are as last seen and the process may have ended since."
        )
        await pilot.press("escape")

        fake_nvml.write(machine(sleeper_pid, util=60))  # the driver recovers
        await until(pilot, "GPU 1 back", lambda: "not answering" not in title(app, 1))
        await until(pilot, "its memory back", lambda: "5.0/80.0GiB" in card_text(app, 1)[0])
        assert not card(app, 1).has_class("-silent")
        assert "(as last seen)" not in row_text(app, sleeper_pid)
        # The memory sparkline (drawn from the history) has the gap, and memory on each side of it.
        memory = list(app.history.gpu(1).memory_used)
        gap = memory.index(None)
        assert memory[gap - 1] == 5 * GiB and memory[-1] == 5 * GiB


async def test_quitting_while_every_gpu_hangs_takes_under_a_second(
    fake_nvml: FakeNvml, sampler: Sampler, sleeper_pid: int
) -> None:
    app = GpuTopApp(sampler, RunConfig(interval_s=INTERVAL_S))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, "a first tick", lambda: newest(app) is not None)
        fake_nvml.write(machine(sleeper_pid).stall(None, 3.0))
        await until(pilot, "both GPUs not answering", lambda: all("not answering" in title(app, i) for i in (0, 1)))
        started = time.monotonic()
        await pilot.press("q")
    sampler.close()
    assert time.monotonic() - started < 1.0  # the hung calls have 3 s to run


async def test_a_driver_hung_at_start_never_holds_the_screen_nor_its_keys(
    fake_nvml: FakeNvml, sampler: Sampler, sleeper_pid: int
) -> None:
    # Every GPU hangs before the first sample, with the usual deadline (2 s): the screen comes up, without data.
    fake_nvml.write(machine(sleeper_pid).stall(None, 60.0, "nvmlDeviceGetMemoryInfo"))
    hung = Sampler(NvmlSource())
    hung.open()
    app = GpuTopApp(hung, RunConfig(interval_s=INTERVAL_S))
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert newest(app) is None and not app.query(GpuCard)
            await pilot.press("left_square_bracket")  # a slower refresh
            assert app.sampling.interval_s == 0.5  # the step after 0.2 s: keys work while the first sample waits
            await until(pilot, "both GPUs not answering", lambda: len(app.query(GpuCard)) == 2 and all(
                re.fullmatch(r" \d  not answering \d+\.\ds NVIDIA .* ", title(app, i)) for i in (0, 1)
            ))
            await pilot.press("q")
        assert app.return_code == 0
    finally:
        hung.close()


async def test_before_any_sample_the_title_says_how_long_it_has_waited(
    fake_nvml: FakeNvml, sampler: Sampler, sleeper_pid: int
) -> None:
    # The driver cannot even count its GPUs: no sample ever comes, and the title says so, with the wait.
    fake_nvml.write(machine(sleeper_pid).stall(None, 60.0, "nvmlDeviceGetCount"))
    hung = Sampler(NvmlSource(deadline_s=DEADLINE_S))
    hung.open()
    app = GpuTopApp(hung, RunConfig(interval_s=INTERVAL_S))
    try:
        async with app.run_test(size=SIZE) as pilot:
            bar = app.query_one(TitleBar)
            await until(pilot, "the title to say it waits", lambda: "no sample yet after" in str(bar.render()))
            waited = re.search(r"no sample yet after (\d+\.\d)s", str(bar.render()))
            assert waited is not None and 2 * INTERVAL_S <= float(waited.group(1)) < 10
            assert newest(app) is None and not app.query(GpuCard)
            await pilot.press("q")
        assert app.return_code == 0
    finally:
        hung.close()


class Stuck:
    """A source that answers once, then hangs until released (a driver with no deadline)."""

    name = "nvml"
    simulated = True
    driver_version = None
    cuda_driver_version = None

    def __init__(self) -> None:
        self.calls = 0
        self.release = False

    def open(self) -> None: ...

    def close(self) -> None:
        self.release = True

    def sample(self) -> tuple[GpuSample, ...]:
        self.calls += 1
        while self.calls > 1 and not self.release:
            time.sleep(0.01)
        return (GpuSample(index=0, name="NVIDIA H100 80GB HBM3", memory_total=80 * GiB, memory_used=GiB),)

    def sample_host(self) -> HostSample | None:
        return HostSample()

    def signal(self, identity: object, signal_number: int) -> None:
        return None


async def test_the_title_says_how_old_the_newest_sample_is_when_sampling_is_late() -> None:
    source = Stuck()
    sampler = Sampler(source)
    app = GpuTopApp(sampler, RunConfig(interval_s=INTERVAL_S))
    async with app.run_test(size=SIZE) as pilot:
        bar = app.query_one(TitleBar)
        assert isinstance(newest(app), Snapshot)
        await until(pilot, "the title to say late", lambda: "last sample" in str(bar.render()))
        age = float(re.search(r"last sample (\d+\.\d)s ago", str(bar.render())).group(1))  # type: ignore[union-attr]
        assert 2 * INTERVAL_S <= age < 10
        source.release = True
        await until(pilot, "the title to be on time again", lambda: "last sample" not in str(bar.render()))
