"""Start-up, phase by phase: gputop against nvitop, side by side, on the fake NVML.

Three figures per monitor, each in a fresh process, the monitors alternating round by round:
- import: seconds to import what the TUI imports before it draws (after the interpreter started);
- first sample: seconds to open NVML and read every GPU and its processes with their host facts
  (gputop's Sampler; nvitop's API as its process panel reads it);
- first paint: the whole command in a 120x40 pseudo-terminal: seconds until the first GPU figure and
  the first process PID were on the (emulated) screen, and for gputop until the full Textual screen
  was; peak RSS and CPU seconds of the run.
Then the ratios gputop/nvitop. Medians over the rounds.

Run (not part of the test suite), e.g. what tests/bench/RESULTS.md reports:
    python tests/bench/bench_startup.py --configs 8x16,8x128 --rounds 5
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`

from bench_overhead import compile_gputop, find_tool, machine, parse_config, ratios  # noqa: E402
from fakenvml import FakeNvml, build_scenario  # noqa: E402
from ptyrun import run_in_pty  # noqa: E402
from sleepers import sleepers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

IMPORTS = {
    "gputop": "import gputop.cli.main, gputop.core.sources.nvml, gputop.ui.app",
    "nvitop": "import nvitop.cli",
}
FIRST_SAMPLE = {
    "gputop": (
        "from gputop.core.sampler import Sampler\n"
        "from gputop.core.sources.nvml import NvmlSource\n"
        "start = time.perf_counter()\n"
        "sampler = Sampler(NvmlSource()); sampler.open(); sampler.sample()\n"
    ),
    "nvitop": (
        "from nvitop import Device, GpuProcess\n"
        "start = time.perf_counter()\n"
        "devices = Device.all()\n"
        "[device.as_snapshot() for device in devices]\n"
        "GpuProcess.take_snapshots([p for d in devices for p in d.processes().values()], failsafe=True)\n"
    ),
}
# Only the full Textual screen shows this (the footer's first key).
FULL_SCREEN_MARK = "F1 Help"


def timed(code: str, env: dict[str, str]) -> float:
    """Seconds ``code`` reports for itself (it prints time.perf_counter() - start), in a fresh Python."""
    program = f"import time\nstart = time.perf_counter()\n{code}\nprint(time.perf_counter() - start)\n"
    done = subprocess.run([sys.executable, "-c", program], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {code!r}\n{done.stderr}")
    return float(done.stdout.split()[-1])


def commands(args: argparse.Namespace) -> dict[str, list[str]]:
    found = {"gputop": [sys.executable, "-m", "gputop", "--interval", "1"]}
    nvitop = find_tool(args.nvitop, "nvitop")
    if nvitop:
        found["nvitop"] = [nvitop, "--interval", "1"]
    return found


def measure(args: argparse.Namespace, config: str) -> None:
    gpus, procs = parse_config(config)
    monitors = commands(args)
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in monitors}

    def note(name: str, key: str, value: float | None) -> None:
        if value is not None:
            figures[name].setdefault(key, []).append(value)

    with tempfile.TemporaryDirectory() as scratch, sleepers(gpus * procs) as pids:
        fake = FakeNvml(Path(scratch))
        fake.write(build_scenario(gpus, procs, pids=pids))
        env = fake.env()
        env["TERM"] = "xterm-256color"
        watch = {
            "gpu": ["80.0", "81920"],
            "process": [f" {pid} " for pid in pids],
            "full": [FULL_SCREEN_MARK],
        }
        for _ in range(args.rounds):
            for name, command in monitors.items():
                note(name, "import", timed(IMPORTS[name], env))
                note(name, "sample", timed(FIRST_SAMPLE[name], env))
                run = run_in_pty(command, args.seconds, 120, 40, env=env, watch=watch, warmup_s=args.seconds)
                note(name, "gpu", run.first_seen.get("gpu"))
                note(name, "process", run.first_seen.get("process"))
                if name == "gputop":
                    note(name, "full", run.first_seen.get("full"))
                note(name, "rss", run.peak_rss / 2**20)
                note(name, "cpu", run.cpu_seconds)
    columns = (
        ("import", "import s"), ("sample", "sample s"), ("gpu", "GPU s"), ("process", "proc s"),
        ("full", "full s"), ("rss", "RSS MiB"), ("cpu", "CPU s"),
    )
    medians = {
        name: {key: statistics.median(values) if values else None for key, values in found.items()}
        for name, found in figures.items()
    }
    print(f"\n{'config':<7} {'monitor':<8} " + " ".join(f"{title:>8}" for _, title in columns))
    for name, values in medians.items():
        cells = ["-" if values.get(key) is None else f"{values[key]:8.3f}" for key, _ in columns]
        print(f"{config:<7} {name:<8} " + " ".join(f"{cell:>8}" for cell in cells))
    ours, theirs = medians["gputop"], medians.get("nvitop")
    if theirs:
        print(f"{config:<7} gputop/nvitop: " + ratios(ours, theirs, list(columns)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="8x16,8x128", help="GPUSxPROCS, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each monitor runs in the pty")
    parser.add_argument("--nvitop", default=None)
    args = parser.parse_args()
    compile_gputop()
    print(f"# {datetime.date.today()} {platform.node()}: {machine()}, Python {platform.python_version()}")
    print(f"# {args.rounds} rounds, medians; first paint in a 120x40 pty, {args.seconds:g} s per run")
    print("# interpreter start alone (python -c pass) is not in 'import s'; 'full s': gputop's Textual screen")
    for config in args.configs.split(","):
        measure(args, config)


if __name__ == "__main__":
    main()
