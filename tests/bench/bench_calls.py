"""How many NVML calls a tick makes: the fake library counts every call, by symbol.

The sampler (``Sampler.sample``, GPUs and host, as the TUI's sampler thread takes it) runs
against the fake libnvidia-ml.so.1 listing G GPUs x P real sleeping processes; after the
first ticks (the slow-changing facts read once), the calls of the next ticks are counted
and printed per tick, by symbol.

Run (not part of the test suite):
    python tests/bench/bench_calls.py --config 8x16 --ticks 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`

from fakenvml import FakeNvml, build_scenario  # noqa: E402
from sleepers import sleepers  # noqa: E402


def symbols() -> list[str]:
    """The functions the fake library counts, from its source (the FAKE_FUNCTIONS list)."""
    source = (Path(__file__).resolve().parents[1] / "fakenvml" / "fake_nvml.c").read_text()
    return sorted({word for word in source.replace("(", " ").replace(")", " ").replace(",", " ").split()
                   if word.startswith("nvml") and word[4:5].isupper()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="8x16", help="GPUSxPROCS")
    parser.add_argument("--ticks", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3, help="ticks before counting")
    args = parser.parse_args()
    gpus, procs = (int(n) for n in args.config.lower().split("x"))
    from gputop.core.sampler import Sampler
    from gputop.core.sources.nvml import NvmlSource

    with tempfile.TemporaryDirectory() as scratch, sleepers(gpus * procs) as pids:
        fake = FakeNvml(Path(scratch))
        fake.write(build_scenario(gpus, procs, pids=pids))
        library = fake.load()
        source = NvmlSource()
        sampler = Sampler(source)
        sampler.open()
        try:
            for _ in range(args.warmup):
                sampler.sample()
            reset = library.fake_nvml_reset_counts
            reset.restype = None
            reset()
            for _ in range(args.ticks):
                sampler.sample()
            counts = {name: fake.call_count(name) for name in symbols()}
        finally:
            sampler.close()
            fake.unload()
    counted = {name: n for name, n in counts.items() if n}
    total = sum(counted.values())
    print(f"# {args.config}: NVML calls per tick, over {args.ticks} ticks after {args.warmup}")
    for name, n in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{n / args.ticks:8.1f}  {name}")
    print(f"{total / args.ticks:8.1f}  all")


if __name__ == "__main__":
    main()
