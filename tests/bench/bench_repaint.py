"""Where gputop's UI thread spends a tick: CPU per tick of the repaint's parts, in a real run.

gputop runs in a 120x40 pty against the fake NVML (G GPUs x P real sleeping processes, values
changing every second, as bench_overhead.py), with ``time.thread_time()`` wrappers on the UI
thread around Textual's compositor refresh, each widget class's ``render_lines``, the terminal
writer and gputop's own steps (receive, the cards, the panel; the history, forecasts and alerts are
taken on the sampler thread). After a warm-up, the CPU of
each part is divided by the ticks seen; the process's CPU per second comes with it. The wrappers
cost a little themselves: compare two trees in one session, alternating, not with other benchmarks.

Run (not part of the test suite):
    python tests/bench/bench_repaint.py --config 8x16 --seconds 20 --runs 2
    python tests/bench/bench_repaint.py --config 8x16 --seconds 20 --full-redraw   # gputop's options after
The wrapped names are private to Textual: this script breaks, not gputop, when they change.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`


def _probe(out: str, warmup_s: float, argv: list[str], why: bool = False) -> None:
    """In the child: wrap, run gputop, write the figures to ``out``."""
    from textual.app import App
    from textual.screen import Screen
    from textual.widget import Widget

    from gputop.cli.main import main
    from gputop.ui.app import GpuTopApp
    from gputop.ui.controls.layout_control import LayoutControl
    from gputop.ui.panel.process_panel import ProcessPanel
    from gputop.ui.terminal.terminal_diff import TerminalDiff
    from gputop.ui.widgets.gpu_card import GpuCard
    from gputop.ui.widgets.host_strip import HostStrip
    from gputop.ui.widgets.process_lines import ProcessLines
    from gputop.ui.widgets.process_table import ProcessTable
    from gputop.ui.widgets.still_frame import StillFrame

    started = time.monotonic()
    ui_thread = threading.get_ident()
    spent: dict[str, float] = collections.defaultdict(float)
    inside: set[str] = set()
    ticks = {"count": 0, "ui_from": 0.0, "ui_to": 0.0, "cpu_from": 0.0, "at_from": 0.0}
    stopped = threading.Event()  # set at exit: what the app does as it closes is not a tick's

    def counted() -> bool:
        """Whether the UI thread's work now is counted: from the first tick after the warm-up to the exit."""
        return threading.get_ident() == ui_thread and ticks["count"] > 0 and not stopped.is_set()

    def timed(owner: type, name: str, per_class: bool = False) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)  # the same signature: gputop checks those of Textual's private names
        def wrapper(self: object, *args: object, **kwargs: object) -> Any:
            key = f"{owner.__name__}.{name}" + (f"[{type(self).__name__}]" if per_class else "")
            if not counted() or key in inside:
                return original(self, *args, **kwargs)
            inside.add(key)
            before = time.thread_time()
            try:
                return original(self, *args, **kwargs)
            finally:
                spent[key] += time.thread_time() - before
                inside.discard(key)

        setattr(owner, name, wrapper)

    for owner, name in [
        (Screen, "_compositor_refresh"),
        (GpuTopApp, "receive"),
        (LayoutControl, "show_cards"),
        (ProcessPanel, "show"),
        (TerminalDiff, "update"),
        (GpuCard, "render_line"),
        (ProcessTable, "render_line"),
    ]:
        timed(owner, name)
    timed(Widget, "render_lines", per_class=True)
    # A card, the grid and the area give their lines from StillFrame (a card draws them in its own frame,
    # past Widget.render_lines): their whole drawing, as the compositor asks for it.
    timed(StillFrame, "render_lines", per_class=True)
    timed(HostStrip, "render_lines")  # the host strip sets its line in its frame (card_frame) too
    # A process table's whole drawing, its frame's or Textual's (the same name before the table had a frame).
    timed(ProcessLines, "render_lines", per_class=True)
    # Lines drawn, by widget class, and (--why) who asked for each refresh: what repaints on a tick.
    lines_drawn: dict[str, int] = collections.defaultdict(int)
    refreshes: dict[str, int] = collections.defaultdict(int)
    render_lines = Widget.render_lines

    def counted_lines(self: Widget, crop: Any) -> Any:
        if counted():
            lines_drawn[type(self).__name__] += crop.height
        return render_lines(self, crop)

    Widget.render_lines = counted_lines  # type: ignore[method-assign]
    if why:
        import traceback

        refresh = Widget.refresh

        def asked(self: Widget, *regions: Any, **kwargs: Any) -> Any:
            if counted():
                frames = traceback.extract_stack(limit=5)[:-1]
                caller = " <- ".join(f"{Path(f.filename).stem}.{f.name}:{f.lineno}" for f in reversed(frames))
                layout = " layout" if kwargs.get("layout") else ""
                refreshes[f"{type(self).__name__}{layout}: {caller}"] += 1
            return refresh(self, *regions, **kwargs)

        Widget.refresh = asked  # type: ignore[method-assign]
        update_styles = App.update_styles

        def restyled(self: App[Any], node: Any, *args: Any, **kwargs: Any) -> Any:
            # A class or pseudo-class changed: the node and everything under it is styled again.
            if counted():
                frames = traceback.extract_stack(limit=8)[:-1]
                caller = " <- ".join(f"{Path(f.filename).stem}.{f.name}:{f.lineno}" for f in reversed(frames))
                refreshes[f"restyle {type(node).__name__}: {caller}"] += 1
            return update_styles(self, node, *args, **kwargs)

        App.update_styles = restyled  # type: ignore[method-assign]

        def noted(owner: type, name: str, label: Callable[..., str]) -> None:
            original: Callable[..., Any] = getattr(owner, name)

            @functools.wraps(original)
            def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                if counted():
                    refreshes[label(self, *args, **kwargs)] += 1
                return original(self, *args, **kwargs)

            setattr(owner, name, wrapper)

        # What makes the compositor draw the whole screen rather than the changed lines.
        from textual._compositor import Compositor

        noted(Compositor, "render_full_update", lambda *_, **__: "compositor: full frame")
        noted(Compositor, "render_partial_update", lambda *_, **__: "compositor: partial frame in one box")
        noted(Compositor, "_render_chops", lambda *_, **__: "compositor: a box of a partial frame rendered")
        noted(Screen, "_refresh_layout", lambda _s, *a, scroll=False, **k: f"screen layout (scroll={scroll})")
        noted(Screen, "_on_layout", lambda _s, m: f"Layout message from {type(m.widget).__name__}")
        noted(Screen, "_on_update_scroll", lambda _s, m: f"UpdateScroll message from {type(m.widget).__name__}")
    receive = GpuTopApp.receive

    def counting(self: GpuTopApp, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() - started >= warmup_s:
            if not ticks["count"]:
                ticks["ui_from"], ticks["cpu_from"] = time.thread_time(), time.process_time()
                ticks["at_from"] = time.monotonic()
            ticks["count"] += 1
            ticks["ui_to"] = time.thread_time()
        return receive(self, *args, **kwargs)

    GpuTopApp.receive = counting  # type: ignore[method-assign]
    app_exit = App.exit

    def exiting(self: App[Any], *args: Any, **kwargs: Any) -> Any:
        ticks["cpu_to"], ticks["at_to"] = time.process_time(), time.monotonic()
        stopped.set()
        return app_exit(self, *args, **kwargs)

    App.exit = exiting  # type: ignore[method-assign]
    status = main(argv)
    count = max(1, ticks["count"] - 1)  # from the first tick counted to the last: count - 1 intervals
    taken = max(1, ticks["count"])  # the parts: each tick counted, with its repaint after it
    figures = {
        "ticks": count,
        "ui_thread_ms_per_tick": 1000 * (ticks["ui_to"] - ticks["ui_from"]) / count,
        "process_ms_per_s": 1000 * (ticks.get("cpu_to", 0) - ticks["cpu_from"])
        / max(1e-9, ticks.get("at_to", 0) - ticks["at_from"]),
        "parts_ms_per_tick": {key: 1000 * value / taken for key, value in sorted(spent.items(), key=lambda kv: -kv[1])},
        "lines_per_tick": {key: value / taken for key, value in sorted(lines_drawn.items(), key=lambda kv: -kv[1])},
        "refreshes_per_tick": {key: value / taken for key, value in sorted(refreshes.items(), key=lambda kv: -kv[1])},
    }
    Path(out).write_text(json.dumps(figures))
    os._exit(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="8x16", help="GPUSxPROCS")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before the parts are counted")
    parser.add_argument("--static", action="store_true", help="figures that never change (bench_overhead's --static)")
    parser.add_argument("--why", action="store_true", help="also count each refresh asked for, by widget and caller")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.probe:
        _probe(args.probe, args.warmup, rest, why=args.why)
        return

    from bench_overhead import compile_gputop, live_machine, parse_config
    from ptyrun import run_in_pty

    compile_gputop()
    gpus, procs = parse_config(args.config)
    with live_machine(gpus, procs, changing=not args.static) as (env, scratch):
        out = scratch / "figures.json"
        command = [sys.executable, __file__, "--probe", str(out), "--warmup", str(args.warmup)]
        command += ["--why"] * args.why + ["--interval", "1"] + rest  # the rest: gputop's own options
        for run in range(args.runs):
            result = run_in_pty(command, args.seconds, 120, 40, env=env)
            figures = json.loads(out.read_text())
            label = args.config + (" static" if args.static else "")
            print(f"# run {run + 1}: {label}, {args.seconds:g} s, {figures['ticks']} ticks counted, "
                  f"process CPU of the whole run {result.cpu_seconds:.2f} s")
            print(f"UI thread per tick {figures['ui_thread_ms_per_tick']:6.2f} ms; "
                  f"process {figures['process_ms_per_s']:6.2f} ms a second")
            for key, value in figures["parts_ms_per_tick"].items():
                if value >= 0.05:
                    print(f"  {key:40} {value:6.2f} ms")
            print("lines drawn per tick: " + ", ".join(
                f"{key} {value:.1f}" for key, value in figures["lines_per_tick"].items() if value >= 0.05
            ))
            for key, value in figures["refreshes_per_tick"].items():
                print(f"  refresh {value:5.2f}/tick  {key}")


if __name__ == "__main__":
    main()
