"""Soak: the real app for a long time, with processes starting and exiting every second. Does memory stay flat?

The TUI (GpuTopApp, headless through Textual's run_test, with its real sampler
thread) samples the fake libnvidia-ml.so.1 at a 0.2 s interval: 8 GPUs, a few
long-lived processes, and every second a handful of new real ``sleep``
processes (each living 1 to 4 s) while the scenario is rewritten to list the
ones alive, as a driver would. Every so often it reports RSS and the size of
everything that could pile up: the psutil cache, the history, the process
table, the reported errors (the sparklines draw from the history), and the threads.

With --stall-every S, one GPU's driver calls hang for --stall-for seconds
(default 10) every S seconds, half-way through each period: the GPU is shown
as not answering and recovers, and no thread may be left behind.

Run (not part of the test suite):
    python tests/bench/bench_soak.py [--minutes 30] [--interval 0.2] [--gpus 8] [--spawn 6]
        [--stall-every 60 --stall-for 10]

Exit status 1 when RSS grew by more than --max-growth-mib (default 10) between
the end of the warm-up and the end, or there are more threads at the end than
after the warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path[:0] = [str(Path(__file__).resolve().parents[n]) for n in (1, 2)]  # fakenvml; this gputop

from fakenvml import FakeNvml, GiB, MiB, Scenario  # noqa: E402

from gputop.core.analysis.tick_feed import Delivery  # noqa: E402
from gputop.core.model import Snapshot  # noqa: E402
from gputop.core.run_config import RunConfig  # noqa: E402
from gputop.core.sampler import Sampler  # noqa: E402
from gputop.core.sources.nvml import NvmlSource  # noqa: E402
from gputop.ui.app import GpuTopApp  # noqa: E402

MIB = 1024**2


@dataclass
class Reading:
    elapsed_s: float
    rss: int
    ticks: int
    cached_processes: int
    history_snapshots: int
    history_gpu_points: int
    history_processes: int
    history_process_points: int
    table_rows: int
    table_cells: int
    errors_reported: int
    notifications: int
    children_alive: int
    threads: int
    stalls: int  # times a GPU went from answering to not answering
    stalled_ticks: int  # ticks with a GPU not answering

    def line(self) -> str:
        return (
            f"{self.elapsed_s:7.0f}s  rss {self.rss / MIB:7.1f}MiB  ticks {self.ticks:6d}  "
            f"psutil cache {self.cached_processes:3d}  history: {self.history_snapshots} snapshots, "
            f"{self.history_gpu_points} GPU points, {self.history_processes} processes "
            f"({self.history_process_points} points)  table {self.table_rows} rows/{self.table_cells} cells  "
            f"errors {self.errors_reported}  "
            f"notifications {self.notifications}  children {self.children_alive}  "
            f"threads {self.threads}  stalls {self.stalls} ({self.stalled_ticks} ticks)"
        )


class Churn:
    """Real short-lived processes, and the scenario that lists the ones alive on 8 GPUs."""

    def __init__(
        self, fake: FakeNvml, gpus: int, spawn_per_s: int, seed: int = 1, stall_every_s: float = 0.0,
        stall_for_s: float = 10.0,
    ) -> None:
        self.fake = fake
        self.gpus = gpus
        self.spawn_per_s = spawn_per_s
        self.stall_every_s = stall_every_s
        self.stall_for_s = stall_for_s
        self.began = time.time()
        self.random = random.Random(seed)
        # Long-lived ones, like the training jobs on a real node.
        self.steady = [subprocess.Popen(["sleep", "100000"]) for _ in range(gpus)]
        self.brief: list[subprocess.Popen[bytes]] = []
        self.started = 0

    def step(self) -> None:
        """Reap the exited, start new ones, list the living."""
        self.brief = [p for p in self.brief if p.poll() is None]
        for _ in range(self.spawn_per_s):
            lifetime = self.random.uniform(1.0, 4.0)
            self.brief.append(subprocess.Popen(["sleep", f"{lifetime:.2f}"]))
            self.started += 1
        scenario = Scenario()
        for index in range(self.gpus):
            scenario.gpu(util_gpu=self.random.randrange(101), memory_used=(10 + index) * GiB, power_mw=400_000)
        for n, process in enumerate(self.steady + self.brief):
            scenario.process(gpu=n % self.gpus, pid=process.pid, used=256 * MiB + n * MiB, sm=n % 100)
        if self.stall_every_s:
            # GPU 1 hangs half-way through each period: this period's stall, or the next one.
            period = (time.time() - self.began) // self.stall_every_s
            start = self.began + period * self.stall_every_s + self.stall_every_s / 2
            if time.time() >= start + self.stall_for_s:
                start += self.stall_every_s
            scenario.stall(1, self.stall_for_s, start=start)
        self.fake.write(scenario)

    def alive(self) -> int:
        return sum(1 for p in self.steady + self.brief if p.poll() is None)

    def stop(self) -> None:
        for process in self.steady + self.brief:
            if process.poll() is None:
                process.kill()
            process.wait()


@dataclass
class Ticks:
    """What the ticks brought: how many, and how many times and for how long a GPU did not answer."""

    count: int = 0
    stalls: int = 0
    stalled: int = 0
    silent: bool = False

    def add(self, snapshot: Snapshot) -> None:
        self.count += 1
        silent = any(not gpu.answering for gpu in snapshot.gpus)
        self.stalls += silent and not self.silent
        self.stalled += silent
        self.silent = silent


def reading(app: GpuTopApp, started: float, ticks: Ticks, churn: Churn) -> Reading:
    gc.collect()
    history = app.history
    table = app.processes
    return Reading(
        elapsed_s=time.monotonic() - started,
        rss=psutil.Process().memory_info().rss,
        ticks=ticks.count,
        cached_processes=len(app.sampler.process_info),
        history_snapshots=len(history),
        history_gpu_points=sum(len(h) for h in history.gpus.values()) + sum(len(h) for h in history.migs.values()),
        history_processes=len(history.processes),
        history_process_points=sum(len(h) for h in history.processes.values()),
        table_rows=len(table.rows),
        table_cells=len(table._cells) + len(table._order.values) + len(table._line_state),
        errors_reported=len(app.sampling.errors_reported),
        notifications=len(app.messages.shown()),
        children_alive=churn.alive(),
        threads=threading.active_count(),
        stalls=ticks.stalls,
        stalled_ticks=ticks.stalled,
    )


async def soak(args: argparse.Namespace, fake: FakeNvml) -> tuple[Reading, Reading, list[Reading]]:
    churn = Churn(fake, args.gpus, args.spawn, stall_every_s=args.stall_every, stall_for_s=args.stall_for)
    churn.step()
    fake.load()
    sampler = Sampler(NvmlSource())
    sampler.open()
    app = GpuTopApp(sampler, RunConfig(interval_s=args.interval))
    ticks = Ticks()
    original = app.receive

    def counted(delivery: Delivery) -> None:
        # The newest tick's snapshot; a busy UI may have skipped some (each is taken all the same).
        ticks.add(delivery.tick.snapshot)
        ticks.count += delivery.ticks - 1
        original(delivery)

    app.receive = counted  # type: ignore[method-assign]
    readings: list[Reading] = []
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            started = time.monotonic()
            end = started + args.minutes * 60
            next_report = started + args.warmup_s
            first: Reading | None = None
            while time.monotonic() < end:
                churn.step()
                await pilot.pause(1.0)
                if time.monotonic() >= next_report:
                    current = reading(app, started, ticks, churn)
                    readings.append(current)
                    first = first or current
                    print(current.line(), flush=True)
                    next_report += args.report_s
            last = reading(app, started, ticks, churn)
            readings.append(last)
            print(last.line(), flush=True)
            await pilot.press("q")
    finally:
        churn.stop()
        sampler.close()
        fake.unload()
    print(f"processes started: {churn.started}")
    assert first is not None
    return first, last, readings


def main() -> int:
    parser = argparse.ArgumentParser(description="gputop soak: memory over a long run with process churn")
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=0.2, help="sampling interval, seconds")
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--spawn", type=int, default=6, help="new processes per second")
    parser.add_argument("--warmup-s", type=float, default=20.0, help="RSS baseline taken after this")
    parser.add_argument("--report-s", type=float, default=30.0, help="seconds between reports")
    parser.add_argument("--max-growth-mib", type=float, default=10.0)
    parser.add_argument("--stall-every", type=float, default=0.0, help="GPU 1 hangs once every S seconds")
    parser.add_argument("--stall-for", type=float, default=10.0, help="for this many seconds")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gputop-soak-") as scratch:
        fake = FakeNvml(Path(scratch))
        first, last, readings = asyncio.run(soak(args, fake))
    growth = (last.rss - first.rss) / MIB
    print(
        f"RSS {first.rss / MIB:.1f}MiB after the {args.warmup_s:g}s warm-up -> {last.rss / MIB:.1f}MiB after "
        f"{last.elapsed_s / 60:.1f} min: {growth:+.1f}MiB (limit {args.max_growth_mib:g}MiB); "
        f"{last.ticks} ticks"
    )
    threads = [r.threads for r in readings]
    print(f"threads: {first.threads} after the warm-up, {min(threads)}-{max(threads)} over the run, "
          f"{last.threads} at the end; a GPU stopped answering {last.stalls} times, for {last.stalled_ticks} ticks")
    return 0 if growth < args.max_growth_mib and last.threads <= first.threads else 1


if __name__ == "__main__":
    sys.exit(main())
