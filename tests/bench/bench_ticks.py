"""CPU per tick, stage by stage: where a tick goes at G GPUs x P real sleeping processes.

One process reads the fake NVML (the scenario changing every tick, as in bench_overhead) and
runs each stage of a tick on its own, timing its CPU (time.process_time, so the sampler's GPU
threads count): the sample (NVML and /proc), the history, the forecaster, the diagnoser, the
alert monitor, the process panel's rows and their order (as the panel keeps them from tick to tick:
``SnapshotRows`` and ``KeptOrder``), the cards' lines (on the UI thread in the app); and the collector's
time over the ticks.
Medians over the ticks after the first few (a process idle on the CPU is read every 4th tick
once it has been found idle twice).

Run (not part of the test suite), e.g. what tests/bench/RESULTS.md reports:
    python tests/bench/bench_ticks.py --config 8x512 --ticks 20
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`

from bench_overhead import machine, parse_config, vary  # noqa: E402
from fakenvml import FakeNvml, build_scenario  # noqa: E402
from sleepers import sleepers  # noqa: E402

from gputop.core.analysis.alerts import AlertMonitor  # noqa: E402
from gputop.core.analysis.diagnosis import Diagnoser  # noqa: E402
from gputop.core.analysis.forecast import Forecaster  # noqa: E402
from gputop.core.analysis.history import History  # noqa: E402
from gputop.core.model import Snapshot  # noqa: E402
from gputop.core.sampler import Sampler  # noqa: E402
from gputop.core.sources.nvml import NvmlSource  # noqa: E402
from gputop.ui.widgets.card_lines import CardContent, full_lines  # noqa: E402
from gputop.ui.widgets.row_order import KeptOrder  # noqa: E402
from gputop.ui.widgets.rows import SortOrder  # noqa: E402
from gputop.ui.widgets.snapshot_rows import SnapshotRows  # noqa: E402

try:  # a tree from before the sparklines were moved on (issue 27) draws each one again
    from gputop.ui.widgets.sparkline import Sparklines
except ImportError:
    Sparklines = None

T = TypeVar("T")
WARM_TICKS = 5
CARD_WIDTH = 56  # a card's lines at 120 columns, two cards a row


def card_lines(snapshot: Snapshot, history: History, sparks: dict[int, object]) -> None:
    """The lines of every GPU's full card, as the cards make them each tick (on the UI thread)."""
    for gpu in snapshot.gpus:
        content = CardContent(gpu, history=history.gpus.get(gpu.index), now=snapshot.timestamp)
        if Sparklines is None:
            full_lines(content, CARD_WIDTH)
        else:
            full_lines(content, CARD_WIDTH, sparks.setdefault(gpu.index, Sparklines()))  # type: ignore[arg-type]


class Stages:
    """CPU seconds of each stage, tick after tick."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}

    def run(self, name: str, work: Callable[..., T], *args: object) -> T:
        start = time.process_time()
        result = work(*args)
        self.times.setdefault(name, []).append(time.process_time() - start)
        return result


class Collector:
    """The collector's CPU time, by generation."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.seconds[info["generation"]] += time.process_time() - self._start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="8x512", help="GPUSxPROCS")
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between ticks")
    parser.add_argument("--static", action="store_true", help="figures that never change (bench_overhead's --static)")
    args = parser.parse_args()
    gpus, procs = parse_config(args.config)
    stages, collector = Stages(), Collector()
    with tempfile.TemporaryDirectory() as scratch, sleepers(gpus * procs) as pids:
        fake = FakeNvml(Path(scratch))
        scenario = build_scenario(gpus, procs, pids=pids)
        fake.write(scenario)
        fake.load()
        sampler = Sampler(NvmlSource())
        sampler.open()
        history, forecaster, diagnoser, monitor = History(), Forecaster(), Diagnoser(), AlertMonitor()
        first = stages.run("first sample", sampler.sample)
        history.add(first)
        sparks: dict[int, object] = {}
        panel_rows, panel_order = SnapshotRows(), KeptOrder()
        gc.callbacks.append(collector)
        try:
            for tick in range(args.ticks):
                if not args.static:
                    fake.write(vary(scenario, tick + 1))
                time.sleep(args.interval)
                snapshot = stages.run("sample", sampler.sample)
                stages.run("history", history.add, snapshot)
                forecasts = stages.run("forecaster", forecaster.update, history, snapshot)
                diagnoses = stages.run("diagnoser", diagnoser.update, snapshot)
                stages.run("alerts", monitor.update, snapshot, forecasts, diagnoses)
                rows = stages.run("panel rows", panel_rows.rows, snapshot, forecasts.processes, diagnoses)
                stages.run("panel sort", panel_order.place, rows, SortOrder())
                stages.run("card lines", card_lines, snapshot, history, sparks)
        finally:
            gc.callbacks.remove(collector)
            sampler.close()
            fake.unload()
    print(f"# {machine()}, Python {sys.version.split()[0]}")
    kind = " static" if args.static else ""
    print(f"# {args.config}{kind}: {gpus * procs} processes, {args.ticks} ticks {args.interval:g} s apart; "
          f"CPU ms per tick, median of the ticks after the first {WARM_TICKS}")
    print(f"{'first sample':<14} {stages.times['first sample'][0] * 1e3:8.1f}  (the first look at every process)")
    total = 0.0
    for name, times in stages.times.items():
        if name == "first sample":
            continue
        median = statistics.median(times[WARM_TICKS:]) * 1e3
        total += median
        print(f"{name:<14} {median:8.1f}")
    print(f"{'sum':<14} {total:8.1f}")
    print(f"collector over the ticks (s): gen0 {collector.seconds[0]:.3f}, gen1 {collector.seconds[1]:.3f}, "
          f"gen2 {collector.seconds[2]:.3f}")


if __name__ == "__main__":
    main()
