"""The ``gputop`` command line."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gputop import __version__
from gputop.core.model import Snapshot
from gputop.core.run_config import DEFAULT_INTERVAL_S, RunConfig
from gputop.core.sampler import MAX_INTERVAL_S, MIN_INTERVAL_S, Sampler, TickLoop
from gputop.core.settings import Settings, load_settings
from gputop.core.sources.base import GpuSource, SourceUnavailable
from gputop.serve.command import add_serve_command, parse_command_line
from gputop.ui.before_screen import quit_keys

EXIT_USAGE = 2
DEFAULT_LISTEN = "127.0.0.1:9400"
# psutil's CPU figures and the network rates need two readings some time apart.
_ONCE_SETTLE_S = 0.25


MIN_ONCE_WIDTH = 60


def width_value(text: str) -> int:
    """argparse type for --width: a number of columns, at least MIN_ONCE_WIDTH."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of columns: {text!r}") from None
    if value < MIN_ONCE_WIDTH:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_ONCE_WIDTH} columns, not {text}")
    return value


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
        default=None,
        metavar="S",
        help=f"seconds between samples (default: the settings file's, else {DEFAULT_INTERVAL_S:g};"
        f" minimum {MIN_INTERVAL_S:g})",
    )
    parser.add_argument("--readonly", action="store_true", help="no signal actions anywhere")
    parser.add_argument("--no-mouse", action="store_true", help="turn mouse reporting off (slow links)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour in --once")
    parser.add_argument(
        "--width", type=width_value, default=None, metavar="N", help="--once in N columns (default: the terminal's)"
    )
    parser.add_argument("--record", metavar="FILE", help="record every tick of the TUI to FILE (JSON lines; .gz: gzip)")
    parser.add_argument("--bell", action="store_true", help="ring the terminal bell when an alert is raised")
    parser.add_argument("--config", type=Path, metavar="PATH", help="settings file (default: the XDG location)")
    parser.add_argument(
        "--full-redraw", action="store_true", help="let Textual write whole regions (no changed-cell output)"
    )
    parser.add_argument("--debug", action="store_true", help="say in the TUI when gputop falls back on something")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser("replay", help="open the TUI on a recording")
    replay.add_argument("file", metavar="FILE")
    add_cluster_commands(commands)
    add_serve_command(commands)
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


def add_cluster_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``gputop export`` (Prometheus /metrics) and ``gputop cluster`` (a cluster view on Prometheus)."""
    export = commands.add_parser("export", help="serve the GPUs as Prometheus metrics on /metrics")
    export.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT", help=f"default {DEFAULT_LISTEN}")
    export.add_argument(
        "--interval", type=interval_value, dest="export_interval", metavar="S", help="seconds between samples"
    )
    export.add_argument("--hostname", metavar="NAME", help="the hostname label (default: this machine's name)")
    export.set_defaults(run=_run_export)

    cluster = commands.add_parser("cluster", help="watch many machines' GPUs through Prometheus")
    cluster.add_argument("--prometheus", required=True, metavar="URL", help="e.g. http://prometheus:9090")
    cluster.add_argument("--hosts", metavar="REGEX", help="only hostnames matching this (anchored) regex")
    cluster.add_argument(
        "--interval", type=interval_value, dest="cluster_interval", default=5.0, metavar="S",
        help="seconds between refreshes (default 5)",
    )
    cluster.add_argument(
        "--stale-after", type=interval_value, metavar="S",
        help="a host whose newest sample is older than this is stale (default 3 x max(interval, 15))",
    )
    cluster.set_defaults(run=_run_cluster)


def _run_export(args: argparse.Namespace) -> int:
    from gputop.core.exporter import Exporter, ListenError, describe_bind_error, parse_listen

    try:
        host, port = parse_listen(args.listen)
        sampler = Sampler(open_source(args, args.settings))
        sampler.open()
    except (ListenError, SourceUnavailable) as error:
        return _fail(str(error))
    exporter = Exporter(
        sampler, args.export_interval or args.interval, hostname=args.hostname, thresholds=args.settings.thresholds
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        try:
            bound_host, bound_port = exporter.start(host, port)
        except OSError as error:
            return _fail(describe_bind_error(host, port, error))
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        print(f"gputop: serving http://{shown}:{bound_port}/metrics", file=sys.stderr, flush=True)
        while not stop.wait(1.0):
            pass
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        exporter.stop()
        sampler.close()


def _run_cluster(args: argparse.Namespace) -> int:
    from gputop.core.cluster.model import ClusterOptions, ConfigError

    try:
        options = ClusterOptions.create(
            args.prometheus, hosts=args.hosts, interval_s=args.cluster_interval, stale_after_s=args.stale_after
        )
    except ConfigError as error:
        return _fail(str(error))
    from gputop.ui.cluster.app import run_cluster

    try:
        return run_cluster(options)
    except KeyboardInterrupt:
        return 130


def open_source(args: argparse.Namespace, settings: Settings, patient: bool = False) -> GpuSource:
    """The demo machine or the real driver; `patient`: wait on a slow nvmlInit, saying so, not give up."""
    if args.demo:
        from gputop.core.sources.demo import DemoSource

        if not 1 <= args.demo_gpus <= 16:
            raise SourceUnavailable("--demo-gpus must be between 1 and 16")
        return DemoSource(gpu_count=args.demo_gpus)
    from gputop.core.sources.nvml import NvmlSource

    return NvmlSource(settings.driver_deadline_s, on_init_slow=_say_init_is_slow if patient else None)


def _say_init_is_slow(deadline_s: float) -> None:
    print(
        f"gputop: nvmlInit has not answered within {deadline_s:g}s: the NVIDIA driver may be hung"
        " or still starting; waiting for it (q or Ctrl+C quits)",
        file=sys.stderr,
        flush=True,
    )


def _fail(message: str) -> int:
    print(f"gputop: {message}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_command_line(build_parser(), argv)
    settings, warnings = load_settings(args.config)
    if getattr(args, "run", None) is not None:
        # export and cluster: no screen for the settings' warnings, and the interval they default to.
        for warning in warnings:
            print(f"gputop: {warning}", file=sys.stderr)
        if args.interval is None:
            args.interval = settings.interval_s
        args.settings = settings
        return int(args.run(args))
    if args.record and (args.once or args.json or args.command is not None):
        return _fail("--record records the live TUI; use `gputop record FILE` to record without it")
    if args.command == "replay":
        return _replay(args, settings, warnings)
    if args.command == "record" or args.once or args.json:
        # No screen to show them on: warnings about the settings go to stderr.
        for warning in warnings:
            print(f"gputop: {warning}", file=sys.stderr)
    tui = not (args.command == "record" or args.once or args.json)
    try:
        source = open_source(args, settings, patient=tui)
        sampler = Sampler(source)
        with quit_keys(enabled=tui):  # while nvmlInit hangs
            sampler.open()
    except SourceUnavailable as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return 130
    try:
        if args.command == "record":
            return _record(sampler, args, settings)
        if args.once or args.json:
            return _one_shot(sampler, args, settings)
        return _tui(sampler, args, settings, warnings)
    except SourceUnavailable as error:  # the driver stopped answering before a GPU was counted
        return _fail(str(error))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`gputop --json | head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        sampler.close()


def tui_config(args: argparse.Namespace, settings: Settings) -> RunConfig:
    """How the TUI runs: the interval from the command line, else from the settings."""
    interval_s = args.interval if args.interval is not None else settings.interval_s
    return RunConfig(
        interval_s=interval_s,
        readonly=args.readonly,
        mouse=not args.no_mouse,
        bell=args.bell,
        record_path=args.record,
        full_redraw=args.full_redraw,
        debug=args.debug,
    )


def _tui(sampler: Sampler, args: argparse.Namespace, settings: Settings, warnings: list[str]) -> int:
    config = tui_config(args, settings)
    recorder = None
    if config.record_path is not None:
        from gputop.core.record import Recorder, RecordingError

        try:
            recorder = Recorder(config.record_path)
        except RecordingError as error:
            return _fail(str(error))
    drawn = _first_frame(sampler)
    try:
        return _load_tui()(
            sampler, config, settings=settings, settings_path=args.config, settings_warnings=warnings, recorder=recorder
        )
    except BaseException:
        if drawn:  # the full screen never took over the terminal: give it back as it was
            from gputop.ui.first_frame import LEAVE

            sys.stdout.write(LEAVE)
            sys.stdout.flush()
        raise


def _load_tui() -> Callable[..., int]:
    """Import the TUI (Textual), without the ssl module asyncio imports for TLS the TUI never speaks.

    ssl loads OpenSSL: 4 MiB of the TUI's memory. asyncio then runs as on a Python built without
    ssl; an ``import ssl`` after this (nothing in the TUI makes one) still works.
    """
    blocked = "ssl" not in sys.modules
    if blocked:
        sys.modules["ssl"] = None  # type: ignore[assignment]
    try:
        from gputop.ui.app import run_tui
    finally:
        if blocked and "ssl" in sys.modules and sys.modules["ssl"] is None:
            del sys.modules["ssl"]
    return run_tui


def _first_frame(sampler: Sampler) -> bool:
    """Show the GPUs at once, while the full screen loads; True when a frame was drawn."""
    if not sys.stdout.isatty():
        return False
    from gputop.ui.first_frame import draw_first_frame

    try:
        with quit_keys():  # while a GPU that hangs holds the first look, up to the deadline
            snapshot = sampler.first_look()
    except Exception:  # noqa: BLE001 - the full screen's first sample reports it
        return False
    return draw_first_frame(snapshot, sys.stdout)


def _replay(args: argparse.Namespace, settings: Settings, warnings: list[str]) -> int:
    from gputop.core.record import RecordingError, read_recording
    from gputop.core.replay import Replay
    from gputop.core.sources.recorded import ReplaySource

    try:
        recording = read_recording(args.file)
    except RecordingError as error:
        return _fail(str(error))
    if not recording.snapshots:
        return _fail(f"nothing to replay: {recording.damage}")
    replay = Replay(recording)
    config = tui_config(args, settings)
    return _load_tui()(
        Sampler(ReplaySource(replay)),
        config,
        settings=settings,
        settings_path=args.config,
        settings_warnings=warnings,
        replay=replay,
    )


def _one_shot(sampler: Sampler, args: argparse.Namespace, settings: Settings) -> int:
    from gputop.core.foresight import Watcher
    from gputop.core.once_table import render_text
    from gputop.core.snapshot_json import dumps, snapshot_to_dict

    # Two samples a quarter of a second apart are too little history for a
    # forecast: --json says so with a null forecast and growth rates of 0.
    watcher = Watcher(settings.thresholds)
    watcher.update(sampler.sample())
    time.sleep(_ONCE_SETTLE_S)
    snapshot = sampler.sample()
    foresight = watcher.update(snapshot)
    if snapshot.gpus and not any(gpu.answering for gpu in snapshot.gpus):
        return _fail(f"no GPU answered: {snapshot.gpus[0].last_error}")
    if args.json:
        document = snapshot_to_dict(
            snapshot, foresight.forecasts, watcher.monitor.active.values(), foresight.diagnoses
        )
        sys.stdout.write(dumps(document, indent=2) + "\n")
        return 0
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    width = args.width or max(MIN_ONCE_WIDTH, shutil.get_terminal_size((80, 24)).columns)
    alerts = list(watcher.monitor.active.values())
    sys.stdout.write(render_text(snapshot, colour=colour, width=width, alerts=alerts, diagnoses=foresight.diagnoses))
    return 0


def _record(sampler: Sampler, args: argparse.Namespace, settings: Settings) -> int:
    from gputop.core.foresight import Watcher
    from gputop.core.record import Recorder, RecordingError

    interval_s = args.record_interval or args.interval or settings.interval_s
    watcher = Watcher(settings.thresholds)
    try:
        recorder = Recorder(args.file)
    except RecordingError as error:
        return _fail(str(error))

    def write(snapshot: Snapshot) -> None:
        foresight = watcher.update(snapshot)
        recorder.write(snapshot, forecasts=foresight.forecasts, alerts=foresight.events, diagnoses=foresight.diagnoses)

    def fail(error: BaseException) -> None:
        raise error

    try:
        TickLoop(sampler, interval_s, write, fail, duration_s=args.duration).run()
    except KeyboardInterrupt:
        pass
    except RecordingError as error:
        return _fail(str(error))
    finally:
        recorder.close()
    print(f"gputop: recorded {recorder.count} snapshots to {args.file}", file=sys.stderr)
    return 0
