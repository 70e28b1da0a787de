"""What a monitor costs: gputop against nvitop and gpustat, side by side, on the fake NVML.

Each monitor runs in a 120x40 pseudo-terminal at a 1 s interval against the fake
libnvidia-ml.so.1 listing G GPUs x P real sleeping processes, for T seconds, the
monitors alternating round by round. Reported per monitor: CPU seconds of its
whole process tree and % of one core, peak RSS, bytes written to the terminal per
second (after a warm-up), and the time until the first GPU name and the first
process PID appeared on screen; then ratios against gputop.

Run (not part of the test suite), e.g. what tests/bench/RESULTS.md reports:
    python tests/bench/bench_overhead.py --configs 8x16,8x128 --static-configs 8x16 --seconds 30 --rounds 2
nvitop and gpustat are measured when found on PATH or beside this Python (or given
with --nvitop/--gpustat), nvtop when tests/bench/build_nvtop.sh built it (or --nvtop);
--only gputop for quick iterations; "textual" (textual_floor.py, measured unless --only leaves it
out) is no monitor but the floor under any Textual one: an app that changes one line a second.
"steady %" is the CPU from the first GPU figure on screen to the end, % of one core;
"running %" the CPU from the end of the warm-up (--warmup) to the end: what a monitor costs
once it runs, its start-up left out whenever its first frame comes (gputop draws one before
its full screen loads, and "steady %" counts that loading).
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import datetime
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`

from fakenvml import FakeNvml, GiB, Scenario, build_scenario  # noqa: E402
from ptyrun import PtyRun, run_in_pty  # noqa: E402
from sleepers import sleepers  # noqa: E402


@dataclass
class Monitor:
    name: str
    command: list[str]


def vary(scenario: Scenario, tick: int) -> Scenario:
    """The scenario a second later: utilization, memory, temperature and power move."""
    gpus = []
    for index, gpu in enumerate(scenario.gpus):
        wave = math.sin(tick / 5 + index)
        gpus.append(dataclasses.replace(
            gpu,
            util_gpu=int(70 + 25 * wave),
            memory_used=int((50 + 10 * wave) * GiB),
            temperature=int(60 + 10 * wave),
            power_mw=int(400_000 + 150_000 * wave),
        ))
    return dataclasses.replace(scenario, gpus=gpus)


class Changer(threading.Thread):
    """Rewrites the scenario every second, so the monitors have live values to draw."""

    def __init__(self, fake: FakeNvml, scenario: Scenario) -> None:
        super().__init__(daemon=True)
        self.fake, self.scenario, self.stopped = fake, scenario, threading.Event()

    def run(self) -> None:
        tick = 0
        while not self.stopped.wait(1.0):
            tick += 1
            self.fake.write(vary(self.scenario, tick))


@contextmanager
def live_machine(gpus: int, procs: int, changing: bool = True) -> Iterator[tuple[dict[str, str], Path]]:
    """The fake NVML listing ``gpus`` x ``procs`` real sleeping processes, its values moving every
    second (``changing``; else never): the environment a monitor runs in, and a scratch folder
    that lasts as long."""
    with tempfile.TemporaryDirectory() as scratch, sleepers(gpus * procs) as pids:
        fake = FakeNvml(Path(scratch))
        scenario = build_scenario(gpus, procs, pids=pids)
        fake.write(scenario)
        changer = Changer(fake, scenario)
        if changing:
            changer.start()
        env = fake.env()
        env["TERM"] = "xterm-256color"
        try:
            yield env, Path(scratch)
        finally:
            changer.stopped.set()
            if changing:
                changer.join()


def parse_config(text: str) -> tuple[int, int]:
    gpus, procs = text.lower().split("x")
    return int(gpus), int(procs)


def machine() -> str:
    """CPU model, core count and memory, from /proc where there is one."""
    model = platform.processor() or platform.machine()
    memory = ""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model)
        with open("/proc/meminfo") as meminfo:
            memory = f", {int(meminfo.readline().split()[1]) / 2**20:.1f} GiB RAM"
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs{memory}"


def find_tool(given: str | None, name: str) -> str | None:
    """The tool given, or on PATH, or next to this Python (an unactivated virtual environment)."""
    if given:
        return given
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.exists() else None)


def compile_gputop() -> None:
    """Write gputop's bytecode, as installing it does (pip compiles it; a checkout run with
    PYTHONDONTWRITEBYTECODE=1 would compile every module again at every start)."""
    compileall.compile_dir(Path(__file__).resolve().parents[2] / "gputop", quiet=1)


# where tests/bench/build_nvtop.sh puts nvtop (built from its source, NVIDIA support only)
NVTOP_BUILT = Path(__file__).resolve().parents[1] / "_build" / "nvtop" / "build" / "src" / "nvtop"


def gputop_in(tree: Path, options: list[str]) -> list[str]:
    """The command that runs the gputop of ``tree`` (a checkout or an archive's folder). It starts in that
    folder: ``python -m`` puts the working folder first on sys.path, ahead of PYTHONPATH, so started from
    a checkout every tree would run the checkout's code."""
    return ["env", "-C", str(tree), f"PYTHONPATH={tree}", sys.executable, "-m", "gputop", "--interval", "1", *options]


def monitors(args: argparse.Namespace) -> list[Monitor]:
    found = [Monitor("gputop", gputop_in(Path(__file__).resolve().parents[2], args.gputop_args.split()))]
    for tree in filter(None, args.trees.split(",")):
        # Another gputop, e.g. main before a change: `git archive REV | tar -x -C /tmp/before`.
        name, path = tree.split("=", 1)
        compileall.compile_dir(Path(path) / "gputop", quiet=1)
        found.append(Monitor(name, gputop_in(Path(path).resolve(), args.gputop_args.split())))
    nvitop = find_tool(args.nvitop, "nvitop")
    if nvitop:
        found.append(Monitor("nvitop", [nvitop, "--interval", "1"]))
    nvtop = args.nvtop or next((str(p) for p in [NVTOP_BUILT] if p.exists()), None) or shutil.which("nvtop")
    if nvtop:
        found.append(Monitor("nvtop", [nvtop, "--delay", "10"]))  # tenths of a second
    gpustat = find_tool(args.gpustat, "gpustat")
    if gpustat:
        found.append(Monitor("gpustat", [gpustat, "-i", "1"]))
    # Not a monitor: Textual's floor, what any Textual app showing one changing line costs.
    found.append(Monitor("textual", [sys.executable, str(Path(__file__).with_name("textual_floor.py"))]))
    return found


def summarise(runs: list[PtyRun], warmup_s: float) -> dict[str, float | None]:
    def median(values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    return {
        "cpu_seconds": median([r.cpu_seconds for r in runs]),
        "cpu_percent": median([r.cpu_percent for r in runs]),
        "steady_percent": median([r.steady_cpu_percent for r in runs]),
        "running_percent": median([r.running_cpu_percent for r in runs]),
        "peak_rss_mib": median([r.peak_rss / 2**20 for r in runs]),
        "bytes_per_s": median([r.bytes_per_second(warmup_s) for r in runs]),
        "first_gpu_s": median([r.first_seen.get("gpu") for r in runs]),
        "first_process_s": median([r.first_seen.get("process") for r in runs]),
    }


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


METRICS = (
    # key, column title, format
    ("cpu_seconds", "CPU s", "6.2f"),
    ("cpu_percent", "CPU %", "6.1f"),
    ("steady_percent", "steady %", "8.2f"),
    ("running_percent", "running %", "9.2f"),
    ("peak_rss_mib", "RSS MiB", "8.1f"),
    ("bytes_per_s", "B/s", "8.0f"),
    ("first_gpu_s", "GPU s", "6.2f"),
    ("first_process_s", "proc s", "7.2f"),
)


def measure(args: argparse.Namespace, chosen: list[Monitor], config: str, static: bool) -> None:
    """Run every monitor on one configuration, alternating, and print the table and the ratios."""
    gpus, procs = parse_config(config)
    with tempfile.TemporaryDirectory() as scratch, sleepers(gpus * procs) as pids:
        fake = FakeNvml(Path(scratch))
        scenario = build_scenario(gpus, procs, pids=pids)
        fake.write(scenario)
        changer = None if static else Changer(fake, scenario)
        if changer:
            changer.start()
        env = fake.env()
        env["TERM"] = "xterm-256color"
        watch = {"gpu": ["80.0", "81920"], "process": [f" {pid} " for pid in pids]}
        runs: dict[str, list[PtyRun]] = {m.name: [] for m in chosen}
        for _ in range(args.rounds):
            for monitor in chosen:
                runs[monitor.name].append(
                    run_in_pty(monitor.command, args.seconds, 120, 40, env=env, watch=watch, warmup_s=args.warmup)
                )
        if changer:
            changer.stopped.set()
            changer.join()
    label = f"{config} {'static' if static else 'live'}"
    print(f"\n{'config':<12} {'monitor':<8} " + " ".join(f"{title:>{int(spec.split('.')[0])}}"
                                                       for _, title, spec in METRICS))
    results = {name: summarise(r, args.warmup) for name, r in runs.items()}
    for name, result in results.items():
        print(f"{label:<12} {name:<8} " + " ".join(fmt(result[key], spec) for key, _, spec in METRICS))
    ours = results.get("gputop")
    for name, result in results.items():
        if name == "gputop" or ours is None:
            continue
        print(f"{label:<12} gputop/{name}: " + ratios(ours, result, [(key, title) for key, title, _ in METRICS]))


def ratios(ours: dict[str, float | None], theirs: dict[str, float | None], columns: list[tuple[str, str]]) -> str:
    """"CPU s 0.41x, RSS MiB 1.76x, ...": each of gputop's figures over the peer's ("-" where one is missing)."""
    shown = []
    for key, title in columns:
        mine, peer = ours.get(key), theirs.get(key)
        shown.append(f"{title} {'-' if mine is None or not peer else format(mine / peer, '.2f') + 'x'}")
    return ", ".join(shown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="8x16,8x128", help="GPUSxPROCS, comma-separated")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before bytes/s and running %% count")
    parser.add_argument("--static", action="store_true", help="nothing changes in --configs: GPU values are constant")
    parser.add_argument("--static-configs", default="", help="GPUSxPROCS also run with nothing changing, e.g. 8x16")
    parser.add_argument("--nvitop", default=None)
    parser.add_argument("--gpustat", default=None)
    parser.add_argument("--nvtop", default=None, help="nvtop's binary (default: tests/_build/nvtop, then PATH)")
    parser.add_argument("--gputop-args", default="", help="extra arguments for gputop")
    parser.add_argument("--trees", default="", help="other gputop trees to run beside this one: NAME=PATH,...")
    parser.add_argument("--only", default=None, help="comma-separated monitor names to run")
    args = parser.parse_args()

    compile_gputop()
    chosen = monitors(args)
    if args.only:
        chosen = [m for m in chosen if m.name in args.only.split(",")]
    print(f"# {datetime.date.today()} {platform.node()}: {machine()}, Python {platform.python_version()}")
    print(f"# {args.seconds:g} s per run, {args.rounds} rounds, 120x40, interval 1 s, "
          f"bytes/s and running % after a {args.warmup:g} s warm-up; medians over the rounds")
    for monitor in chosen:
        print(f"# {monitor.name}: {' '.join(monitor.command)}")
    configs = [(config, args.static) for config in args.configs.split(",") if config]
    configs += [(config, True) for config in args.static_configs.split(",") if config]
    for config, static in configs:
        measure(args, chosen, config, static)


if __name__ == "__main__":
    main()
