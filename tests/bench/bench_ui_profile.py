"""Where the UI thread's tick goes, function by function: cProfile around the tick's two halves.

gputop runs in a 120x40 pty against the fake NVML (G GPUs x P real sleeping processes, values
changing every second unless --static, as bench_overhead.py), at a 1 s interval. After the warm-up,
each tick handed to the app (``GpuTopApp.receive``) and each frame Textual composes and writes
(``Screen._compositor_refresh``, a private name: this script breaks, not gputop, when it changes)
run under one cProfile; the functions that cost most are printed in microseconds per tick (own
time, and time with what they call). cProfile roughly doubles what it measures: read the figures
against each other, and bench_repaint.py / bench_threads.py for absolute ones.

Run (not part of the test suite):
    python tests/bench/bench_ui_profile.py --config 8x16 --seconds 20
    python tests/bench/bench_ui_profile.py --config 8x16 --seconds 45 --warmup 25 --static
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`


def _probe(out: str, warmup_s: float, argv: list[str]) -> None:
    """In the child: profile the tick's halves after the warm-up, write the stats to ``out`` at exit."""
    from textual.app import App
    from textual.screen import Screen

    from gputop.cli.main import main
    from gputop.ui.app import GpuTopApp

    started = time.monotonic()
    profile = cProfile.Profile()
    ticks = [0]

    def profiled(owner: type, name: str, count: bool = False) -> None:
        original = getattr(owner, name)

        def wrapper(self: object, *args: Any, **kwargs: Any) -> Any:
            if time.monotonic() - started < warmup_s:
                return original(self, *args, **kwargs)
            ticks[0] += count
            return profile.runcall(original, self, *args, **kwargs)

        setattr(owner, name, wrapper)

    profiled(GpuTopApp, "receive", count=True)
    profiled(Screen, "_compositor_refresh")
    app_exit = App.exit

    def exiting(self: App[Any], *args: Any, **kwargs: Any) -> Any:
        profile.create_stats()
        profile.dump_stats(out)
        Path(out + ".ticks").write_text(str(ticks[0]))
        return app_exit(self, *args, **kwargs)

    App.exit = exiting  # type: ignore[method-assign]
    status = main(argv)
    os._exit(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="8x16", help="GPUSxPROCS")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before the ticks are profiled")
    parser.add_argument("--static", action="store_true", help="figures that never change (bench_overhead's --static)")
    parser.add_argument("--top", type=int, default=30, help="how many functions to print, dearest first")
    parser.add_argument("--save", help="keep the raw cProfile stats in this file (pstats: callers, counts)")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.probe:
        _probe(args.probe, args.warmup, rest)
        return

    from bench_overhead import compile_gputop, live_machine, parse_config
    from ptyrun import run_in_pty

    compile_gputop()
    gpus, procs = parse_config(args.config)
    with live_machine(gpus, procs, changing=not args.static) as (env, scratch):
        out = scratch / "ui.prof"
        command = [sys.executable, __file__, "--probe", str(out), "--warmup", str(args.warmup), "--interval", "1"]
        run_in_pty(command, args.seconds, 120, 40, env=env)
        ticks = max(1, int(Path(str(out) + ".ticks").read_text()))
        stats = pstats.Stats(str(out))
        if args.save:
            stats.dump_stats(args.save)
    label = args.config + (" static" if args.static else " live")
    print(f"# {label}: {ticks} ticks profiled after {args.warmup:g} s; us per tick (under cProfile)")
    print(f"{'own':>8} {'with calls':>10}  function")
    rows = []
    for (path, line, name), (_cc, _nc, own, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((own, cumulative, f"{Path(path).name}:{line}({name})"))
    for own, cumulative, where in sorted(rows, reverse=True)[: args.top]:
        print(f"{1e6 * own / ticks:8.0f} {1e6 * cumulative / ticks:10.0f}  {where}")
    print("dearest with what they call:")
    for own, cumulative, where in sorted(rows, key=lambda row: -row[1])[: args.top]:
        print(f"{1e6 * own / ticks:8.0f} {1e6 * cumulative / ticks:10.0f}  {where}")


if __name__ == "__main__":
    main()
