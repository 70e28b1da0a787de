"""CPU time of one NvmlSource.sample() against the fake NVML library.

Run: .venv/bin/python tests/bench/bench_sampling.py [--gpus 8] [--procs 128] [--samples 50]
Not collected by pytest. `build_scenario` (from tests/fakenvml, re-exported
here) is meant to be reused by the full-sampler benchmark.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`

from fakenvml import FakeNvml, build_scenario  # noqa: E402

from gputop.core.sources.nvml import NvmlSource  # noqa: E402

__all__ = ["build_scenario", "cpu_times", "report"]


def cpu_times(run: Callable[[], object], samples: int) -> list[float]:
    """CPU seconds (time.process_time) of each of `samples` calls."""
    times = []
    for _ in range(samples):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return times


def report(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{label}: median {statistics.median(times) * 1e3:.2f} ms, p95 {p95 * 1e3:.2f} ms CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--procs", type=int, default=128)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        fake = FakeNvml(Path(scratch))
        fake.write(build_scenario(args.gpus, args.procs))
        fake.load()
        source = NvmlSource()
        source.open()
        try:
            first = cpu_times(source.sample, 1)[0]
            gpus = source.sample()
            processes = sum(len(gpu.processes) for gpu in gpus)
            times = cpu_times(source.sample, args.samples)
        finally:
            source.close()
            fake.unload()
    print(f"{args.gpus} GPUs x {args.procs} processes ({processes} listed), {args.samples} samples")
    print(f"first sample: {first * 1e3:.2f} ms CPU")
    print(report("NvmlSource.sample()", times))


if __name__ == "__main__":
    main()
