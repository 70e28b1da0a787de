"""Where gputop's CPU goes, thread by thread, once it runs: % of one core per thread.

gputop runs in a 120x40 pty against the fake NVML (G GPUs x P real sleeping processes, values
changing every second unless --static, as bench_overhead.py), at a 1 s interval. After the
warm-up and again at the end, each thread's CPU time is read from the kernel
(/proc/PID/task/TID/schedstat, nanoseconds); the child names its threads in a file, so the
figures come out by thread name (the eight per-GPU lanes summed as one line as well). Nothing
is wrapped or sampled: the figures are what the threads cost, without a profiler's own cost.
Each thread's wake-ups a second (its voluntary context switches: each time it slept and was
woken) come beside its CPU; the last line says what one wake-up costs on this machine alone (on
a virtual machine 100 us or more, a few on bare metal).

Run (not part of the test suite):
    python tests/bench/bench_threads.py --config 8x16 --seconds 40 --runs 2
    python tests/bench/bench_threads.py --config 8x16 --seconds 40 --static
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`


def _probe(out: str, name_after_s: float, argv: list[str]) -> None:
    """In the child: name the threads in ``out`` once they are all started, then run gputop."""
    from gputop.cli.main import main

    def name_threads() -> None:
        time.sleep(name_after_s)
        names = {str(thread.native_id): thread.name for thread in threading.enumerate()}
        Path(out).write_text(json.dumps(names))

    threading.Thread(target=name_threads, name="bench-namer", daemon=True).start()
    sys.exit(main(argv))


def thread_cpu(pid: int) -> dict[str, tuple[float, int]]:
    """CPU seconds of each thread of ``pid`` so far, and how often it went to sleep, by thread id."""
    found: dict[str, tuple[float, int]] = {}
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as handle:
                    cpu = int(handle.read().split()[0]) / 1e9
                with open(f"/proc/{pid}/task/{tid}/status") as handle:
                    sleeps = sum(int(line.split()[1]) for line in handle if line.startswith("voluntary_ctxt_switches"))
                found[tid] = (cpu, sleeps)
    return found


def wake_up_cost_us(period_s: float = 0.1, wakes: int = 20) -> float:
    """CPU microseconds one wake-up of a sleeping thread costs on this machine (a timed wait that
    runs out, with nothing to do): what each of the threads' wake-ups costs before any work."""
    spent: list[float] = []
    stop = threading.Event()

    def sleeper() -> None:
        started = time.thread_time()
        for _ in range(wakes):
            stop.wait(period_s)
        spent.append(time.thread_time() - started)

    thread = threading.Thread(target=sleeper)
    thread.start()
    thread.join()
    return 1e6 * spent[0] / wakes


def command_line(process: Any) -> str:
    """A psutil process's command line as one string; empty for one that ended meanwhile."""
    import psutil

    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def label(name: str) -> str:
    """The line a thread is counted on: the per-GPU lanes (gputop-gpu0, gputop-gpu1, ...) as one."""
    if name.startswith("gputop-gpu") and name[len("gputop-gpu") :].isdigit():
        return "gputop-gpuN (all GPU lanes)"
    return name


def one_run(args: argparse.Namespace, env: dict[str, str], out: Path) -> dict[str, tuple[float, float]]:
    """% of one core and wake-ups a second per thread label, from the warm-up to the last second of one run."""
    import psutil
    from ptyrun import run_in_pty

    marks: dict[str, tuple[float, dict[str, tuple[float, int]]]] = {}

    def watch() -> None:
        # run_in_pty forks the child itself: the child of this process that runs the probe.
        me = psutil.Process()
        while not (children := [c.pid for c in me.children() if str(out) in command_line(c)]):
            time.sleep(0.01)
        child = children[0]
        time.sleep(args.warmup)
        marks["from"] = (time.monotonic(), thread_cpu(child))
        time.sleep(args.seconds - args.warmup - 1)
        marks["to"] = (time.monotonic(), thread_cpu(child))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    command = [sys.executable, __file__, "--probe", str(out), "--warmup", str(args.warmup), "--interval", "1"]
    command += args.gputop_args  # gputop's own options, e.g. --full-redraw
    run_in_pty(command, args.seconds, 120, 40, env=env)
    watcher.join(timeout=5)
    names = json.loads(out.read_text()) if out.exists() else {}
    (t0, before), (t1, after) = marks["from"], marks["to"]
    cpu_by: dict[str, float] = collections.defaultdict(float)
    wakes_by: dict[str, float] = collections.defaultdict(float)
    for tid, (cpu, sleeps) in after.items():
        cpu_then, sleeps_then = before.get(tid, (0.0, 0))
        key = label(names.get(tid, f"thread {tid}"))
        cpu_by[key] += 100.0 * (cpu - cpu_then) / (t1 - t0)
        wakes_by[key] += (sleeps - sleeps_then) / (t1 - t0)
    return {key: (cpu_by[key], wakes_by[key]) for key in cpu_by}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="8x16", help="GPUSxPROCS")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before the threads are counted")
    parser.add_argument("--static", action="store_true", help="figures that never change (bench_overhead's --static)")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.probe:
        _probe(args.probe, args.warmup / 2, rest)
        return
    args.gputop_args = rest

    from bench_overhead import compile_gputop, live_machine, parse_config

    compile_gputop()
    gpus, procs = parse_config(args.config)
    per_run: list[dict[str, tuple[float, float]]] = []
    with live_machine(gpus, procs, changing=not args.static) as (env, scratch):
        for _ in range(args.runs):
            per_run.append(one_run(args, env, scratch / "threads.json"))
    label_text = args.config + (" static" if args.static else " live")
    print(
        f"# {label_text}: {args.runs} run(s) of {args.seconds:g} s, counted from {args.warmup:g} s to the last "
        "second; % of one core, median over the runs"
    )
    print(f"  {'thread':32} {'CPU %':>7} {'wake-ups/s':>11}")
    medians = {
        key: (
            statistics.median(run.get(key, (0.0, 0.0))[0] for run in per_run),
            statistics.median(run.get(key, (0.0, 0.0))[1] for run in per_run),
        )
        for run in per_run
        for key in run
    }
    for key, (cpu, wakes) in sorted(medians.items(), key=lambda item: -item[1][0]):
        if cpu >= 0.005 or wakes >= 0.05:  # a thread that only wakes costs its wake-ups
            print(f"  {key:32} {cpu:7.2f} {wakes:11.1f}")
    whole = statistics.median(sum(cpu for cpu, _ in run.values()) for run in per_run)
    wakes = statistics.median(sum(w for _, w in run.values()) for run in per_run)
    print(f"  {'whole process':32} {whole:7.2f} {wakes:11.1f}")
    print(f"one wake-up of a sleeping thread costs {wake_up_cost_us():.0f} us of CPU here (a timed wait run out)")


if __name__ == "__main__":
    main()
