"""The ``gputop`` command: which command runs, and the TUI's start (a first frame at once, then the full
screen). The parser is ``args``; the other commands' runners are ``commands`` and ``serve.command``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from gputop.cli.args import build_parser
from gputop.cli.args import fail as _fail
from gputop.cli.commands import run_cluster, run_doctor, run_export, run_once, run_record
from gputop.cli.serve.command import parse_command_line, run_serve
from gputop.core.glyphs import environment_at_start, use_ascii, wants_ascii
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.settings import Settings, load_settings
from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.binding import quiet_wrapper
from gputop.core.sources.factory import open_source
from gputop.ui.terminal.before_screen import holding_keys, quit_keys
from gputop.ui.terminal.terminal_streams import drawing_on_terminal, terminal_refusal

# The commands that run on their own, given the parsed arguments (and the settings in ``args.settings``).
SERVICES: dict[str | None, Callable[[argparse.Namespace], int]] = {
    "export": run_export,
    "cluster": run_cluster,
    "serve": run_serve,
    "doctor": run_doctor,
}


def main(argv: Sequence[str] | None = None) -> int:
    quiet_wrapper()  # before anything imports pynvml
    args = parse_command_line(build_parser(), argv)
    settings, warnings = load_settings(args.config)
    use_ascii(args.ascii or settings.ascii or wants_ascii(environment_at_start()))
    runner = SERVICES.get(args.command)
    if runner is not None:
        # export, cluster and serve: no screen for the settings' warnings, and the interval they default to.
        for warning in warnings:
            print(f"gputop: {warning}", file=sys.stderr)
        if args.interval is None:
            args.interval = settings.interval_s
        args.settings = settings
        return runner(args)
    if args.record and (args.once or args.json or args.command is not None):
        return _fail("--record records the live TUI; use `gputop record FILE` to record without it")
    if args.by is not None and not args.once:
        return _fail('--by groups the --once table: add --once (--json lists every grouping under "owners")')
    if args.command == "replay":
        return _replay(args, settings, warnings)
    if args.command == "record" or args.once or args.json:
        # No screen to show them on: warnings about the settings go to stderr.
        for warning in warnings:
            print(f"gputop: {warning}", file=sys.stderr)
    tui = not (args.command == "record" or args.once or args.json)
    typed = bytearray()  # keys read while gputop waits on the driver: for the full screen
    try:
        source = open_source(args, settings, patient=tui)
        sampler = Sampler(source, net_interfaces=settings.net_interfaces)
        with quit_keys(enabled=tui, typed=typed):  # while nvmlInit hangs
            sampler.open()
    except SourceUnavailable as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return 130
    try:
        if args.command == "record":
            return run_record(sampler, args, settings)
        if args.once or args.json:
            return run_once(sampler, args, settings)
        if (refusal := terminal_refusal()) is not None:  # after the driver's own refusal, if any
            return _fail(refusal)
        return _tui(sampler, args, settings, warnings, typed)
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


def _tui(sampler: Sampler, args: argparse.Namespace, settings: Settings, warnings: list[str], typed: bytearray) -> int:
    config = tui_config(args, settings)
    recorder = None
    if config.record_path is not None:
        from gputop.core.recording.record import Recorder, RecordingError

        try:
            recorder = Recorder(config.record_path)
        except RecordingError as error:
            return _fail(str(error))
    with drawing_on_terminal():
        drawn = _first_frame(sampler, typed)
        # From the first frame on, the keys typed wait for the full screen (before_screen says how).
        with holding_keys() as hold:
            try:
                return _load_tui()(
                    sampler, config, settings=settings, settings_path=args.config, settings_warnings=warnings,
                    recorder=recorder, give_back_keys=None if hold is None else hold.give_back,
                    typed_ahead=bytes(typed),
                )
            except BaseException:
                if drawn:  # the full screen never took over the terminal: give it back as it was
                    from gputop.ui.terminal.first_frame import LEAVE

                    sys.stdout.write(LEAVE)
                    sys.stdout.flush()
                raise


def _load_tui() -> Callable[..., int]:
    """Import the TUI; its ``run_tui`` (``ui.terminal.textual_imports`` says what it leaves out, and why)."""
    from gputop.ui.terminal.textual_imports import importing_tui

    with importing_tui():
        from gputop.ui.app import run_tui
    return run_tui


def _first_frame(sampler: Sampler, typed: bytearray) -> bool:
    """Show the GPUs at once, while the full screen loads; True when a frame was drawn. The keys read
    while a hung GPU holds the first look are added to ``typed``."""
    if not sys.stdout.isatty():
        return False
    from gputop.ui.terminal.first_frame import draw_first_frame

    try:
        with quit_keys(typed=typed):  # while a GPU that hangs holds the first look, up to the deadline
            snapshot = sampler.first_look()
    except Exception:  # noqa: BLE001 - the full screen's first sample reports it
        return False
    return draw_first_frame(snapshot, sys.stdout)


def _replay(args: argparse.Namespace, settings: Settings, warnings: list[str]) -> int:
    from gputop.core.recording.record import RecordingError, read_recording
    from gputop.core.recording.replay import Replay
    from gputop.core.sources.recorded import ReplaySource

    try:
        recording = read_recording(args.file)
    except RecordingError as error:
        return _fail(str(error))
    if not recording.snapshots:
        return _fail(f"nothing to replay: {recording.damage}")
    if (refusal := terminal_refusal()) is not None:
        return _fail(refusal)
    replay = Replay(recording)
    config = tui_config(args, settings)
    with drawing_on_terminal():
        return _load_tui()(
            Sampler(ReplaySource(replay)),
            config,
            settings=settings,
            settings_path=args.config,
            settings_warnings=warnings,
            replay=replay,
        )
