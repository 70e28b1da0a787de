"""The ``gputop`` command line."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence

from gputop import __version__
from gputop.core.config import DEFAULT_INTERVAL_S, RunConfig
from gputop.core.sampler import MAX_INTERVAL_S, MIN_INTERVAL_S, Sampler
from gputop.core.sources.base import GpuSource, SourceUnavailable

EXIT_USAGE = 2
# psutil's CPU figures and the network rates need two readings some time apart.
_ONCE_SETTLE_S = 0.25


def interval_value(text: str) -> float:
    """argparse type for an interval in seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or not MIN_INTERVAL_S <= value <= MAX_INTERVAL_S:
        raise argparse.ArgumentTypeError(
            f"must be between {MIN_INTERVAL_S:g} and {MAX_INTERVAL_S:g} seconds, not {text}"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gputop",
        description="A terminal GPU monitor: GPUs, their processes, and trouble coming.",
    )
    parser.add_argument("--version", action="version", version=f"gputop {__version__}")
    parser.add_argument("--demo", action="store_true", help="run on a simulated machine (no GPU needed)")
    parser.add_argument("--demo-gpus", type=int, default=4, metavar="N", help="GPUs in the demo machine (1-16)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--once", action="store_true", help="print one readable table and exit")
    output.add_argument("--json", action="store_true", help="print one JSON document and exit")
    parser.add_argument(
        "-i",
        "--interval",
        type=interval_value,
        default=DEFAULT_INTERVAL_S,
        metavar="S",
        help=f"seconds between samples (default {DEFAULT_INTERVAL_S:g}, minimum {MIN_INTERVAL_S:g})",
    )
    parser.add_argument("--readonly", action="store_true", help="no signal actions anywhere")
    parser.add_argument("--no-mouse", action="store_true", help="turn mouse reporting off (slow links)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour in --once")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    record = commands.add_parser("record", help="sample without a TUI into a JSON-lines file (.gz: gzip)")
    record.add_argument("file", metavar="FILE")
    record.add_argument("--duration", type=duration_value, default=None, metavar="S", help="stop after S seconds")
    record.add_argument(
        "--interval", type=interval_value, default=None, metavar="S", dest="record_interval",
        help="seconds between samples (default: the top-level --interval)",
    )
    return parser


def duration_value(text: str) -> float:
    """argparse type for a positive duration in seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def open_source(args: argparse.Namespace) -> GpuSource:
    if args.demo:
        from gputop.core.sources.demo import DemoSource

        if not 1 <= args.demo_gpus <= 16:
            raise SourceUnavailable("--demo-gpus must be between 1 and 16")
        return DemoSource(gpu_count=args.demo_gpus)
    from gputop.core.sources.nvml import NvmlSource

    return NvmlSource()


def _fail(message: str) -> int:
    print(f"gputop: {message}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        source = open_source(args)
        sampler = Sampler(source)
        sampler.open()
    except SourceUnavailable as error:
        return _fail(str(error))
    try:
        if args.command == "record":
            return _record(sampler, args)
        if args.once or args.json:
            return _one_shot(sampler, args)
        from gputop.ui.app import run_tui

        config = RunConfig(interval_s=args.interval, readonly=args.readonly, mouse=not args.no_mouse)
        return run_tui(sampler, config)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`gputop --json | head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        sampler.close()


def _one_shot(sampler: Sampler, args: argparse.Namespace) -> int:
    from gputop.core.format import safe_json
    from gputop.core.report import render_text, snapshot_to_dict

    sampler.sample()
    time.sleep(_ONCE_SETTLE_S)
    snapshot = sampler.sample()
    if args.json:
        sys.stdout.write(safe_json(json.dumps(snapshot_to_dict(snapshot), indent=2, ensure_ascii=False)) + "\n")
        return 0
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    sys.stdout.write(render_text(snapshot, colour=colour, width=80))
    return 0


def _record(sampler: Sampler, args: argparse.Namespace) -> int:
    from gputop.core.record import Recorder, RecordingError

    interval_s = args.record_interval or args.interval
    try:
        recorder = Recorder(args.file)
    except RecordingError as error:
        return _fail(str(error))
    started = time.monotonic()
    due = started
    try:
        while args.duration is None or time.monotonic() - started < args.duration:
            recorder.write(sampler.sample())
            due = max(due + interval_s, time.monotonic())
            remaining = due - time.monotonic()
            if args.duration is not None:
                remaining = min(remaining, started + args.duration - time.monotonic())
            if remaining > 0:
                time.sleep(remaining)
    except KeyboardInterrupt:
        pass
    except RecordingError as error:
        return _fail(str(error))
    finally:
        recorder.close()
    print(f"gputop: recorded {recorder.count} snapshots to {args.file}", file=sys.stderr)
    return 0
