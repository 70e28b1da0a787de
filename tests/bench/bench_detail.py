"""What the GPU detail screen sends the terminal, against the main screen, side by side.

gputop runs in a 120x40 pseudo-terminal at a 1 s interval against the fake NVML
(G GPUs x P real sleeping processes, GPU figures changing every second, as in
bench_overhead): once showing the main screen, once with `g` typed a few seconds
in, which opens the detail screen of the selected process's GPU; alternating,
round by round. Reported: bytes written per second after the warm-up, CPU, and
the ratio detail/main (issue 14 asks for at most 3x).

Run (not part of the test suite), e.g. what tests/bench/RESULTS.md reports:
    python tests/bench/bench_detail.py --config 8x16 --seconds 30 --rounds 3
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`

from bench_overhead import compile_gputop, live_machine, machine, parse_config  # noqa: E402
from ptyrun import PtyRun, run_in_pty  # noqa: E402

DETAIL_MARK = "Memory used (GiB)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="8x16", help="GPUSxPROCS")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--key-at", type=float, default=4.0, help="seconds after the start to type g")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before bytes/s counts")
    args = parser.parse_args()
    compile_gputop()
    gpus, procs = parse_config(args.config)
    command = [sys.executable, "-m", "gputop", "--interval", "1"]
    print(f"# {datetime.date.today()} {platform.node()}: {machine()}, Python {platform.python_version()}")
    print(f"# {args.config} live, {args.seconds:g} s per run, {args.rounds} rounds, 120x40, interval 1 s,"
          f" g typed at {args.key_at:g} s, bytes/s after {args.warmup:g} s; medians")
    print(f"# {' '.join(command)}")
    runs: dict[str, list[PtyRun]] = {"main": [], "detail": []}
    with live_machine(gpus, procs) as (env, _scratch):
        for _ in range(args.rounds):
            for screen, keys in (("main", ()), ("detail", ((args.key_at, b"g"),))):
                run = run_in_pty(
                    command, args.seconds, 120, 40, env=env, watch={"detail": [DETAIL_MARK]},
                    warmup_s=args.warmup, keys=keys,
                )
                if screen == "detail" and "detail" not in run.first_seen:
                    raise SystemExit(f"the detail screen never opened; the screen was:\n{run.last_screen}")
                runs[screen].append(run)
    rates = {name: statistics.median(r.bytes_per_second(args.warmup) for r in found) for name, found in runs.items()}
    cpu = {name: statistics.median(r.cpu_percent for r in found) for name, found in runs.items()}
    print(f"\n{'screen':<8} {'B/s':>8} {'CPU %':>6}  per round B/s")
    for name in runs:
        rounds = ", ".join(f"{r.bytes_per_second(args.warmup):.0f}" for r in runs[name])
        print(f"{name:<8} {rates[name]:8.0f} {cpu[name]:6.1f}  {rounds}")
    print(f"detail/main: B/s {rates['detail'] / rates['main']:.2f}x, CPU {cpu['detail'] / cpu['main']:.2f}x")


if __name__ == "__main__":
    main()
