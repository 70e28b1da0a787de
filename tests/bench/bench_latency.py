"""Tick time with a driver as slow as a real one: gputop's sampler against nvitop's API, in one run.

A real nvmlDeviceGetPcieThroughput blocks about 20 ms per counter and other
calls take about a millisecond. The fake libnvidia-ml.so.1 is given those
latencies (20 ms on the PCIe counters, 1 ms on every other call) and lists 8
GPUs x N real sleeping processes. Measured, round after round:

- gputop: wall time of one ``Sampler.sample()`` (GPUs and host facts, all
  processes joined), and the spacing of the snapshots a ``SamplerThread``
  delivers at a 0.5 s interval;
- nvitop: wall time of what its TUI reads per refresh through its API: every
  device's snapshot (memory, utilization, temperature, fan, power, clocks,
  PCIe throughput, ...) and its processes' snapshots.

Run (not part of the test suite):
    python tests/bench/bench_latency.py [--gpus 8] [--procs 128] [--ticks 20] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[n]) for n in (1, 2)]  # fakenvml; this gputop

from fakenvml import FakeNvml, Scenario, build_scenario  # noqa: E402
from sleepers import sleepers  # noqa: E402

from gputop.core.model import Snapshot  # noqa: E402
from gputop.core.sampler import Sampler, SamplerThread  # noqa: E402
from gputop.core.sources.nvml import NvmlSource  # noqa: E402

INTERVAL_S = 0.5


def slow_driver(gpus: int, procs: int, pids: list[int]) -> Scenario:
    """The busy machine, with a real driver's latencies: the first matching delay counts."""
    scenario = build_scenario(gpus, procs, pids=pids)
    return scenario.delay("nvmlDeviceGetPcieThroughput", 0.020).delay("*", 0.001)


def wall_times(run: Callable[[], object], count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(times) * 1e3:6.1f} ms  p95 {p95 * 1e3:6.1f} ms  max {max(times) * 1e3:6.1f} ms"


def gputop_ticks(ticks: int) -> list[float]:
    sampler = Sampler(NvmlSource())
    sampler.open()
    try:
        sampler.sample()  # static facts, first look at every process
        return wall_times(sampler.sample, ticks)
    finally:
        sampler.close()


def gputop_spacing(ticks: int) -> list[float]:
    """Seconds between the snapshots a SamplerThread delivers at INTERVAL_S."""
    sampler = Sampler(NvmlSource())
    sampler.open()
    arrived: list[float] = []
    enough = threading.Event()

    def on_snapshot(snapshot: Snapshot) -> None:
        arrived.append(time.monotonic())
        if len(arrived) > ticks:
            enough.set()

    thread = SamplerThread(sampler, INTERVAL_S, on_snapshot, lambda error: None)
    thread.start()
    enough.wait(ticks * INTERVAL_S * 4 + 30)
    thread.stop()
    thread.join(10)
    sampler.close()
    return [b - a for a, b in zip(arrived[1:], arrived[2:], strict=False)]


def nvitop_ticks(ticks: int) -> list[float]:
    from nvitop import Device, GpuProcess

    devices = Device.all()

    def refresh() -> None:
        for device in devices:
            device.as_snapshot()
            GpuProcess.take_snapshots(device.processes().values(), failsafe=True)

    refresh()
    return wall_times(refresh, ticks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--procs", type=int, default=128)
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    print(f"# {time.strftime('%Y-%m-%d')} {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}")
    print(f"# {args.gpus}x{args.procs}, 20 ms per PCIe counter, 1 ms per other call, "
          f"{args.ticks} ticks per round, {args.rounds} rounds")
    print(f"# {' '.join([Path(sys.executable).name, *sys.argv])}")
    results: dict[str, list[float]] = {"gputop tick": [], "nvitop tick": [], "gputop spacing": []}
    with tempfile.TemporaryDirectory() as scratch, sleepers(args.gpus * args.procs) as pids:
        fake = FakeNvml(Path(scratch))
        fake.write(slow_driver(args.gpus, args.procs, pids))
        fake.load()
        try:
            for _ in range(args.rounds):
                results["gputop tick"] += gputop_ticks(args.ticks)
                results["nvitop tick"] += nvitop_ticks(args.ticks)
                results["gputop spacing"] += gputop_spacing(args.ticks)
        finally:
            fake.unload()
    for label, times in results.items():
        print(f"{label:<16} {summary(times)}")
    ratio = statistics.median(results["gputop tick"]) / statistics.median(results["nvitop tick"])
    spacing = results["gputop spacing"]
    print(f"gputop/nvitop tick: {ratio:.2f}x; spacing at {INTERVAL_S} s: "
          f"min {min(spacing):.3f} s, max {max(spacing):.3f} s")


if __name__ == "__main__":
    main()
