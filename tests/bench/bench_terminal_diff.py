"""The changed-cell writer alone: CPU per frame over frames recorded from a real run, and its bytes.

``--record F`` runs gputop in a 120x40 pty against the fake NVML (G GPUs x P real sleeping
processes, figures moving every second unless --static, as bench_overhead.py) and keeps every frame
Textual hands the writer (``textual_private.changed_cells``), from the first: the compositor's
chops and spans, or a full frame's lines. A Strip that Textual hands back again is kept once, so
the replay hands back the same object just as often as the run did.

``--replay F`` feeds those frames, in order, to a fresh writer ``--repeat`` times and prints the CPU
per frame (``time.thread_time``, each frame's best repeat: the machine is shared), over all frames
and over those after the start-up's (``--skip``), and the bytes it sent, with a digest of them.
Replay one recording with two trees (``PYTHONPATH=TREE``), one after the other, to compare their
CPU; the same digest means they sent the very same bytes.

Run (not part of the test suite):
    python tests/bench/bench_terminal_diff.py --record /tmp/frames.pkl --config 8x16 --seconds 20
    PYTHONPATH=. python tests/bench/bench_terminal_diff.py --replay /tmp/frames.pkl --repeat 20
The frame types are private to Textual: this script breaks, not gputop, when they change.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakenvml`


class _Recorder:
    """Frames as plain data; each Strip object once, by its number, with its segments."""

    def __init__(self) -> None:
        self.frames: list[tuple[Any, ...]] = []
        self.strips: list[tuple[list[Any], int]] = []
        self._numbers: dict[int, int] = {}
        self._kept: list[object] = []  # the recorded strips stay alive, so no id is reused

    def strip(self, strip: Any) -> int | None:
        if strip is None:
            return None
        number = self._numbers.get(id(strip))
        if number is None:
            number = self._numbers[id(strip)] = len(self.strips)
            self.strips.append((list(strip), strip.cell_length))
            self._kept.append(strip)
        return number

    def frame(self, frame: Any, color_system: str | None, width: int, height: int) -> None:
        from textual._compositor import ChopsUpdate, LayoutUpdate

        if isinstance(frame, ChopsUpdate):
            chops = [{x: self.strip(strip) for x, strip in line.items()} for line in frame.chops]
            self.frames.append(("chops", chops, list(frame.spans), frame.chop_ends, color_system, width, height))
        elif isinstance(frame, LayoutUpdate):
            lines = [[self.strip(strip) for strip in line] for line in frame.strips]
            self.frames.append(("layout", lines, tuple(frame.region), color_system, width, height))


def _probe(out: str, argv: list[str]) -> None:
    """In the child: record each frame handed to the writer, write them to ``out`` at exit."""
    from textual.app import App

    from gputop.cli.main import main
    from gputop.ui.terminal import textual_private

    recorder = _Recorder()
    original = textual_private.changed_cells

    def changed_cells(diff: Any, frame: Any, console: Any, size: Any) -> Any:
        recorder.frame(frame, console.color_system, size.width, size.height)
        return original(diff, frame, console, size)

    textual_private.changed_cells = changed_cells  # type: ignore[assignment]
    app_exit = App.exit

    def exiting(self: App[Any], *args: Any, **kwargs: Any) -> Any:
        Path(out).write_bytes(pickle.dumps((recorder.frames, recorder.strips)))
        return app_exit(self, *args, **kwargs)

    App.exit = exiting  # type: ignore[method-assign]
    os._exit(main(argv))


def _frames(path: str) -> list[tuple[Any, Any, Any]]:
    """The recorded frames as Textual's own frame objects, with each console and size."""
    from rich.console import Console
    from rich.segment import Segment
    from textual._compositor import ChopsUpdate, LayoutUpdate
    from textual.geometry import Region, Size
    from textual.strip import Strip

    frames, strips = pickle.loads(Path(path).read_bytes())
    made = [Strip([Segment(*segment) for segment in segments], length) for segments, length in strips]
    consoles: dict[tuple[Any, ...], Console] = {}
    replay = []
    for kind, *fields in frames:
        color_system, width, height = fields[-3:]
        key = (color_system, width, height)
        if key not in consoles:
            consoles[key] = Console(color_system=color_system, force_terminal=True, width=width, height=height)
        if kind == "chops":
            chops, spans, chop_ends = fields[:3]
            lines = [{x: None if n is None else made[n] for x, n in line.items()} for line in chops]
            frame: Any = ChopsUpdate(lines, spans, chop_ends)
        else:
            lines, region = fields[:2]
            frame = LayoutUpdate([[made[n] for n in line] for line in lines], Region(*region))
        replay.append((frame, consoles[key], Size(width, height)))
    return replay


def _replay(path: str, repeat: int, skip: int) -> None:
    from gputop.ui.terminal.terminal_diff import TerminalDiff
    from gputop.ui.terminal.textual_private import changed_cells

    frames = _frames(path)
    best = [float("inf")] * len(frames)
    sent = b""
    clock = time.thread_time
    for again in range(repeat):
        if again:  # Strip objects cache their crops and lengths: each repeat gets fresh ones
            frames = _frames(path)
        diff = TerminalDiff()
        written = []
        for index, (frame, console, size) in enumerate(frames):
            started = clock()
            written.append(changed_cells(diff, frame, console, size) or "")
            best[index] = min(best[index], clock() - started)
        sent = "".join(written).encode()
    steady = best[skip:]
    print(
        f"{len(frames)} frames, best of {repeat} per frame; writer CPU {1e6 * sum(best) / len(best):.0f} us a frame, "
        f"{1e6 * sum(steady) / max(1, len(steady)):.0f} us after the first {skip} (start-up); "
        f"{len(sent)} bytes sent, digest {hashlib.sha256(sent).hexdigest()[:16]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", help="run gputop and keep its frames in this file")
    parser.add_argument("--replay", help="feed the frames kept in this file to the writer")
    parser.add_argument("--config", default="8x16", help="GPUSxPROCS")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--static", action="store_true", help="figures that never change (bench_overhead's --static)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--skip", type=int, default=8, help="start-up frames left out of the steady figure")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.probe:
        _probe(args.probe, rest)
    elif args.replay:
        _replay(args.replay, args.repeat, args.skip)
    elif args.record:
        from bench_overhead import compile_gputop, live_machine, parse_config
        from ptyrun import run_in_pty

        compile_gputop()
        gpus, procs = parse_config(args.config)
        with live_machine(gpus, procs, changing=not args.static) as (env, _scratch):
            command = [sys.executable, __file__, "--probe", str(Path(args.record).resolve()), "--interval", "1"]
            run_in_pty(command, args.seconds, 120, 40, env=env)
        print(f"frames kept in {args.record}")
    else:
        parser.error("--record or --replay")


if __name__ == "__main__":
    main()
